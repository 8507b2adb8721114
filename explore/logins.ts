// The World's login steps: a login, bursts and storms at the login gate, a token scan and forged
// tokens, each checked against LOGIN-*, AUTH-* and the gate's limits.
import { SignJWT } from 'jose';
import { authenticate } from '../src/service/authenticate.ts';
import { mapError } from '../src/transports/errors/table.ts';
import { INVARIANTS } from './invariants.ts';
import { EXPLORE_ENV, MESSAGES, TOKEN_LIFETIME_MS } from './spec-constants.ts';
import type { Forgery, LoginAs, Route } from './workload.ts';
import { CLIENT_TIMEOUT_MS } from './world-constants.ts';
import type { Answer } from './world-types.ts';
import { LEGACY_PASSWORD, LEGACY } from './fleet-setup.ts';
import { WorldRequests } from './requests.ts';

export abstract class WorldLogins extends WorldRequests {
  protected async login(user: number, replica: number, as: LoginAs, route: Route = 'direct'): Promise<string> {
    const client = this.client(user);
    const credentials = {
      right: { username: client.username, password: client.password },
      wrong: { username: client.username, password: 'not-the-password' },
      unknown: { username: `nobody-${user}`, password: client.password },
      empty: { username: '', password: client.password },
      legacy: { username: (LEGACY[user % LEGACY.length] as (typeof LEGACY)[number]).username, password: LEGACY_PASSWORD },
    }[as];
    const status = await this.send(
      replica,
      client,
      'login',
      { body: JSON.stringify(credentials) },
      (answer) => {
        if (as !== 'right') {
          this.checks.hold(answer.status !== 200, INVARIANTS.answers, () => `login as ${as} answered 200`);
          if (answer.status === 401)
            this.checks.hold(
              (answer.body as { error?: string }).error === MESSAGES.invalidCredentials,
              INVARIANTS.answers,
              () => `login as ${as}: 401 ${JSON.stringify(answer.body)}`,
            );
        }
        if (answer.status === 200 && as === 'right') {
          const token = (answer.body as { token: string }).token;
          client.token = token;
          client.stale = false;
          client.tokenIat = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { iat: number }).iat;
        }
      },
      { route },
    );
    return String(status);
  }

  /** EXPLORE-login-gate: logins sent at once by one client: at most concurrency + its queue are taken. */
  protected async loginBurst(user: number, replicaIndex: number, count: number): Promise<string> {
    const replica = this.live(replicaIndex);
    if (replica === undefined) return 'refused';
    const client = this.client(user);
    const body = JSON.stringify({ username: client.username, password: client.password });
    const via = this.via(client, 'direct');
    const answers = await this.await(
      Promise.all(Array.from({ length: count }, () => this.handle(replica, client, 'login', { body }, undefined, via))),
      60_000,
    );
    if (answers === undefined) return 'in flight';
    // Taken: the password was checked (200 or 401). A 500 is the database failing before the gate.
    const taken = answers.filter((a) => a.status === 200 || a.status === 401).length;
    this.checks.hold(
      taken <= this.gate.concurrency + this.gate.queuePerClient,
      INVARIANTS.loginGate,
      () => `${taken} of ${count} simultaneous logins of one client were taken`,
    );
    const busy = answers.filter((a) => a.kind === 'login-busy').length;
    this.checks.hold(
      taken + busy + answers.filter((a) => a.limited === true || a.status === 'refused' || a.status === 500).length === count,
      INVARIANTS.loginGate,
      () => `a burst login was refused for another reason: ${JSON.stringify(answers)}`,
    );
    return answers.map((a) => a.status).join(',');
  }

  /**
   * Logins of one user from several addresses at once (rule LOGIN-gate-fair): everyone past the limiter
   * is answered; no client has more than concurrency + its queue taken; refusals are the gate's.
   */
  protected async loginStorm(replicaIndex: number, perClient: readonly number[]): Promise<string> {
    const replica = this.live(replicaIndex);
    if (replica === undefined) return 'refused';
    const client = this.client(0);
    const body = JSON.stringify({ username: client.username, password: client.password });
    const sent = perClient.flatMap((n, c) =>
      Array.from({ length: n }, () => {
        const address = `10.2.0.${c + 1}`;
        return this.handle(replica, client, 'login', { body }, undefined, { peer: address, forwardedFor: undefined, key: address }).then(
          (answer) => ({ c, answer }),
        );
      }),
    );
    const answers = await this.await(Promise.all(sent), 60_000);
    if (answers === undefined) return 'in flight';
    for (let c = 0; c < perClient.length; c++) {
      const mine = answers.filter((a) => a.c === c).map((a) => a.answer);
      const taken = mine.filter((a) => a.status === 200).length;
      this.checks.hold(
        taken <= this.gate.concurrency + this.gate.queuePerClient,
        INVARIANTS.loginGate,
        () => `client 10.2.0.${c + 1} had ${taken} of ${mine.length} simultaneous logins taken`,
      );
    }
    this.checks.hold(
      answers.every(
        ({ answer: a }) => a.status === 200 || a.kind === 'login-busy' || a.limited === true || a.status === 'refused' || a.status === 500,
      ),
      INVARIANTS.loginGate,
      () => `a storm login was answered otherwise: ${JSON.stringify(answers.map((a) => a.answer.status))}`,
    );
    return answers.map((a) => a.answer.status).join(',');
  }

  /**
   * EXPLORE-rate: a scanner spraying `count` addresses (no token: each is one bucket and a 401) in two
   * halves a second apart. Each is admitted once, answered 401, and the process keeps a bounded number
   * of buckets (rule LIMIT-rate-keying: full buckets are pruned once 10,000 are held).
   */
  protected async scan(replicaIndex: number, count: number): Promise<string> {
    const replica = this.live(replicaIndex);
    if (replica === undefined) return 'down';
    const client = this.client(0);
    let unauthorised = 0;
    // In chunks under one wait each: a slow shared store (the cache's Redis) makes each decision wait on the clock.
    const chunk = 250;
    for (let start = 0; start < count; start += chunk) {
      if (start <= count / 2 && start + chunk > count / 2) await this.advance(1_000);
      const answers = await this.await(
        Promise.all(
          Array.from({ length: Math.min(chunk, count - start) }, (_, j) => {
            const i = start + j;
            const address = `198.18.${Math.floor(i / 250)}.${i % 250}`;
            return this.handle(replica, client, 'listOrders', {}, undefined, { peer: address, forwardedFor: undefined, key: address });
          }),
        ),
        60_000,
      );
      if (answers === undefined || !replica.alive) return 'cut short';
      for (const answer of answers) {
        this.checks.hold(
          answer.status === 401 || answer.status === 429,
          INVARIANTS.answers,
          () => `a scan request without a token answered ${answer.status}`,
        );
        if (answer.status === 401) unauthorised += 1;
      }
    }
    const held = replica.buckets.size;
    this.checks.hold(
      held <= 2 * 10_000 + 1,
      INVARIANTS.rate,
      () => `replica ${replica.index} holds ${held} rate-limit buckets after a scan of ${count} addresses`,
    );
    return `${unauthorised} x 401, ${held} buckets`;
  }

  protected async forged(user: number, replica: number, kind: Forgery): Promise<string> {
    const client = this.client(user);
    const secret = new TextEncoder().encode(EXPLORE_ENV.JWT_SECRET);
    const nowS = Math.floor(this.runtime.nowMs() / 1_000);
    const sign = (
      claims: Record<string, unknown>,
      key: Uint8Array = secret,
      iat = nowS,
      lifetimeS = TOKEN_LIFETIME_MS / 1_000,
    ): Promise<string> =>
      this.runtime.serial(() =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
          .setSubject(client.userId)
          .setIssuer('orders')
          .setIssuedAt(iat)
          .setExpirationTime(iat + lifetimeS)
          .sign(key),
      );
    let header: string;
    switch (kind) {
      case 'garbage':
        header = 'Bearer not.a.token';
        break;
      case 'padded':
        header = `Bearer ${(await sign({ name: client.username })).replace(/\.([^.]*)$/, '.$1=')}`;
        break;
      case 'wrong-secret':
        header = `Bearer ${await sign({ name: client.username }, new TextEncoder().encode('another-secret-another-secret-another'))}`;
        break;
      case 'no-name':
        header = `Bearer ${await sign({})}`;
        break;
      case 'too-long':
        header = `Bearer ${await sign({ name: client.username }, secret, nowS, (2 * TOKEN_LIFETIME_MS) / 1_000)}`;
        break;
      case 'future':
        header = `Bearer ${await sign({ name: client.username }, secret, nowS + 3_600)}`;
        break;
      case 'empty':
        header = 'Bearer ';
        break;
      case 'basic':
        header = `Basic ${Buffer.from(`${client.username}:${client.password}`).toString('base64')}`;
        break;
    }
    const want = kind === 'empty' || kind === 'basic' ? MESSAGES.missingCredentials : MESSAGES.invalidToken;
    const live = this.live(replica);
    if (live === undefined) return 'refused';
    const answer = await this.await(
      (async (): Promise<Answer> => {
        const decision = await live.limiter.take({ peer: client.address, forwardedFor: undefined });
        if (!decision.allowed) return { status: 429, body: undefined };
        this.admit(live, client.limitKey, decision);
        try {
          await authenticate(header.startsWith('Bearer ') || header.startsWith('Basic ') ? header : undefined, live.tokens);
          return { status: 200, body: undefined };
        } catch (error) {
          const mapped = mapError(error);
          return { status: mapped.httpStatus, body: { error: mapped.message } };
        }
      })(),
      CLIENT_TIMEOUT_MS,
    );
    if (answer === undefined || answer.status === 429) return String(answer?.status ?? 'timeout');
    this.checks.hold(
      answer.status === 401 && (answer.body as { error: string }).error === want,
      INVARIANTS.answers,
      () => `a ${kind} token was answered ${answer.status} ${JSON.stringify(answer.body)}, want 401 ${want}`,
    );
    return String(answer.status);
  }
}
