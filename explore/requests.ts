// One request as a transport runs it (limiter, authenticate, RestApi), and the model each answer
// updates and is checked against (rate, sessions, statuses and bodies).
import { authenticate } from '../src/service/authenticate.ts';
import { setRateLimitHeaders } from '../src/rate-limit/limiter.ts';
import type { RateLimitDecision } from '../src/rate-limit/store.ts';
import { mapError } from '../src/transports/errors/table.ts';
import type { RestRequest } from '../src/transports/http/rest/api.ts';
import { INVARIANTS, Violation } from './invariants.ts';
import type { OrderDto } from './oracle.ts';
import type { Replica } from './replica.ts';
import { MESSAGES, RATE_BURST, RATE_PER_SECOND, SESSION_LINGER_MS, SESSION_RECENT, TOKEN_LIFETIME_MS } from './spec-constants.ts';
import type { Route } from './workload.ts';
import { CLIENT_TIMEOUT_MS, PROXY, SPOOFED, REQUEST_ENDED, CLIENT_GONE } from './world-constants.ts';
import type { Status, Answer, Operation, Outgoing, Client, SessionModel } from './world-types.ts';
import { WorldState } from './world.ts';

export abstract class WorldRequests extends WorldState {
  /** Where a request comes from (rule LIMIT-rate-trust-proxy) and the key the limiter must give it. */
  protected via(client: Client, route: Route): { peer: string | undefined; forwardedFor: string | string[] | undefined; key: string } {
    switch (route) {
      case 'direct':
        return { peer: client.address, forwardedFor: undefined, key: client.limitKey };
      case 'direct-spoof':
        return { peer: client.address, forwardedFor: SPOOFED, key: client.limitKey };
      case 'proxy':
        return { peer: PROXY, forwardedFor: client.address, key: this.trustProxy ? client.limitKey : PROXY };
      case 'proxy-spoof':
        return { peer: `::ffff:${PROXY}`, forwardedFor: [SPOOFED, client.address], key: this.trustProxy ? client.limitKey : PROXY };
      case 'proxy-garbled':
        // The rightmost entry, the balancer's own, is not an address: the walk ends at the balancer.
        return { peer: PROXY, forwardedFor: client.index % 2 === 0 ? `${client.address}, unknown` : `${client.address},`, key: PROXY };
      case 'socket-gone':
        // Rule LIMIT-rate-keying: a request whose peer is unknown shares the key `unknown`.
        return { peer: undefined, forwardedFor: undefined, key: 'unknown' };
    }
  }

  /**
   * One request as an HTTP transport runs it (CHAIN-order): the rate limiter, then for a protected route
   * `authenticate`, then the RestApi operation, errors mapped by the one error table. `then` sees the
   * answer whenever it comes (checks run then); the client waits CLIENT_TIMEOUT_MS for it.
   */
  protected async send(
    replicaIndex: number,
    client: Client,
    operation: Operation,
    request: Outgoing,
    then: (answer: Answer, replica: Replica) => void,
    options: { route?: Route; abandonAfterMs?: number; settled?: () => void; twin?: number } = {},
  ): Promise<Status> {
    const replica = this.live(replicaIndex);
    const twin = options.twin === undefined ? undefined : this.live(options.twin);
    if (options.twin !== undefined && twin === undefined) options.settled?.();
    if (replica === undefined) {
      options.settled?.();
      return 'refused';
    }
    const token = client.token;
    const tokenIat = token === undefined ? undefined : client.tokenIat;
    const controller = new AbortController();
    let gone = false;
    if (options.abandonAfterMs !== undefined) {
      this.runtime.time.setTimeout(() => {
        gone = true;
        controller.abort(CLIENT_GONE);
      }, options.abandonAfterMs);
    }
    // A double submit goes to a second replica at the same moment, under the same wait.
    const works = [replica, ...(twin === undefined ? [] : [twin])].map((target) => {
      const flightKey = `${target.index}.${target.incarnation}.${client.index}`;
      this.userFlights.set(flightKey, (this.userFlights.get(flightKey) ?? 0) + 1);
      return this.handle(target, client, operation, request, token, this.via(client, options.route ?? 'direct'), controller, () => gone)
        .then((answer) => {
          // A replica that died with the request in hand answers nothing; a client gone hears nothing.
          if (!target.alive) return 'refused' as const;
          if (answer.status === 'gone') return 'gone' as const;
          if (answer.status === 401 && operation !== 'login') client.stale = true;
          this.checkAnswer(operation, answer, tokenIat);
          then(answer, target);
          return answer.status;
        })
        .finally(() => {
          this.userFlights.set(flightKey, (this.userFlights.get(flightKey) ?? 1) - 1);
          options.settled?.();
        });
    });
    const work = Promise.all(works).then((statuses) => statuses[0] as Status);
    let status: Status = 'timeout';
    await this.await(
      work.then((s) => void (status = s)),
      CLIENT_TIMEOUT_MS,
    );
    return status;
  }

  protected async handle(
    replica: Replica,
    client: Client,
    operation: Operation,
    request: Outgoing,
    token: string | undefined,
    via: { peer: string | undefined; forwardedFor: string | string[] | undefined; key: string },
    controller: AbortController = new AbortController(),
    gone: () => boolean = () => false,
  ): Promise<Answer> {
    const dbBefore = this.dbTroubleEpoch;
    const dbTroubled = (): boolean =>
      this.backends.store.trouble.isDown || this.backends.store.trouble.queuedFailures > 0 || this.dbTroubleEpoch !== dbBefore;
    const troubledAtStart = dbTroubled();
    const decision = await replica.limiter.take({ peer: via.peer, forwardedFor: via.forwardedFor });
    this.checkHeaders(decision);
    if (!decision.allowed) return { status: 429, body: undefined, limited: true };
    this.admit(replica, via.key, decision);
    const admittedAt = this.runtime.nowMs();
    const req: RestRequest = {
      params: request.params ?? {},
      query: request.query ?? new URLSearchParams(),
      readBody: () => Promise.resolve(request.body ?? ''),
      client: via.key,
      signal: controller.signal,
      headers: request.headers ?? {},
    };
    const gate = `${replica.index}.${replica.incarnation}`;
    const login = operation === 'login';
    let counted = login;
    if (login) {
      this.liveLogins.set(gate, (this.liveLogins.get(gate) ?? 0) + 1);
      // A caller that goes away no longer counts: its wait must leave the gate's queue at once.
      controller.signal.addEventListener('abort', () => {
        if (counted && gone()) {
          counted = false;
          this.liveLogins.set(gate, (this.liveLogins.get(gate) ?? 1) - 1);
        }
      });
    }
    try {
      if (login) return { ...(await replica.api.login(req)), admittedAt };
      const principal = await authenticate(token === undefined ? undefined : `Bearer ${token}`, replica.tokens);
      const answer = await replica.api[operation](req, principal);
      // The service recorded a view in this user's session on this process (SESSION-view-on-get).
      if (operation === 'getOrder' && replica.alive) this.viewed(replica, client, (answer.body as OrderDto).id);
      if (operation === 'recent' && replica.alive) this.touched(replica, client);
      return { ...answer, admittedAt };
    } catch (error) {
      // A check that failed inside a port (at a commit) is the explorer's finding, not the service's error.
      if (error instanceof Violation) throw error;
      if (!replica.alive) return { status: 'refused', body: undefined };
      if (gone()) return { status: 'gone', body: undefined };
      const mapped = mapError(error);
      this.checks.hold(
        mapped.kind !== 'internal',
        INVARIANTS.answers,
        () => `${operation} on replica ${replica.index} failed unexpectedly (${mapped.httpStatus}): ${String(error)}`,
      );
      if (mapped.kind === 'backend-unavailable') {
        this.checks.hold(
          troubledAtStart || dbTroubled(),
          INVARIANTS.answers,
          () => `${operation}: 500 while the database was healthy: ${String(error)}`,
        );
      }
      return { status: mapped.httpStatus, body: { error: mapped.message }, kind: mapped.kind, admittedAt };
    } finally {
      if (counted) {
        counted = false;
        this.liveLogins.set(gate, (this.liveLogins.get(gate) ?? 1) - 1);
      }
      controller.abort(REQUEST_ENDED);
    }
  }

  /** RATE-headers as the transports send them: the bucket size, whole tokens left, Retry-After only on a refusal. */
  protected checkHeaders(decision: RateLimitDecision): void {
    const headers: Record<string, string> = {};
    setRateLimitHeaders({ setHeader: (name, value) => (headers[name] = value) }, decision);
    this.checks.hold(
      headers['ratelimit-limit'] === String(RATE_BURST) &&
        Number(headers['ratelimit-remaining']) >= 0 &&
        Number(headers['ratelimit-remaining']) < RATE_BURST &&
        Number(headers['ratelimit-reset']) >= 1 &&
        (decision.allowed ? headers['retry-after'] === undefined : Number(headers['retry-after']) >= 1),
      INVARIANTS.rate,
      () => `rate-limit headers ${JSON.stringify(headers)} for allowed=${decision.allowed}`,
    );
  }

  protected viewed(replica: Replica, client: Client, id: string): void {
    const key = this.sessionKey(replica, client);
    let views = this.views.get(key);
    if (views === undefined) this.views.set(key, (views = new Set()));
    views.add(id);
    this.viewCounts.set(key, (this.viewCounts.get(key) ?? 0) + 1);
    const session = this.touched(replica, client);
    session.recent = [id, ...session.recent.filter((r) => r !== id)].slice(0, SESSION_RECENT);
    session.views += 1;
  }

  /** The user's session on that process was used now: still open if used within the linger window, else a fresh one. */
  protected touched(replica: Replica, client: Client): SessionModel {
    const key = this.sessionKey(replica, client);
    const now = this.runtime.nowMs();
    let session = this.sessions.get(key);
    if (session === undefined || now >= session.lastUse + SESSION_LINGER_MS) {
      session = { recent: [], views: 0, lastUse: now };
      this.sessions.set(key, session);
    }
    session.lastUse = now;
    return session;
  }

  /**
   * EXPLORE-rate: never more than burst + rate x elapsed admissions per client key: per replica process
   * for its own bucket's decisions, per fleet for the shared store's; each admission one decision.
   */
  protected admit(replica: Replica, key: string, decision: RateLimitDecision): void {
    const source = this.decisions.get(decision);
    this.checks.hold(source !== undefined, INVARIANTS.rate, () => `replica ${replica.index} admitted ${key} on a decision no store took`);
    // Rule LIMIT-rate-keying: the limiter keyed the request on the address the explorer reads the rule to give.
    const event = this.announcedDecisions.get(decision);
    this.checks.hold(
      this.options.seed % 5 === 4 || (event?.key === key && event.source === source),
      INVARIANTS.rate,
      () => `replica ${replica.index} keyed a request of ${key} on ${event?.key} (${event?.source}, taken by ${source})`,
    );
    const scope = source === 'shared' ? `fleet.${key}` : `${replica.index}.${replica.incarnation}.${key}`;
    const now = this.runtime.nowMs();
    this.lastAdmission.set(`${replica.index}.${replica.incarnation}.${key}`, now);
    const entry = this.admitted.get(scope) ?? { first: now, count: 0 };
    entry.count += 1;
    this.admitted.set(scope, entry);
    const bound = RATE_BURST + (RATE_PER_SECOND * (now - entry.first)) / 1_000;
    this.checks.hold(
      entry.count <= bound + 1e-9,
      INVARIANTS.rate,
      () => `${scope} (${source}) admitted ${entry.count} requests in ${now - entry.first} ms (bound ${bound})`,
    );
  }

  /**
   * EXPLORE-answers: a status the route declares; 401 exactly for a missing, forged or expired token
   * (expired: the service's clock at admission at or past exp, spec 5 rule 5), with its spec 5 message.
   */
  protected checkAnswer(operation: Operation, answer: Answer, tokenIat: number | undefined): void {
    if (answer.status === 'refused' || answer.status === 'gone') return;
    const allowed: Record<Operation, readonly number[]> = {
      login: [200, 401, 429, 500],
      // 422: a key reused with another body (IDEM-mismatch); sendCreate checks it was one.
      createOrder: [201, 400, 401, 422, 429, 500],
      getOrder: [200, 400, 401, 403, 404, 429, 500],
      listOrders: [200, 401, 429, 500],
      recent: [200, 401, 429],
    };
    this.checks.hold(
      allowed[operation].includes(answer.status),
      INVARIANTS.answers,
      () => `${operation} answered ${answer.status} ${JSON.stringify(answer.body)}`,
    );
    if (operation === 'login' || answer.status === 429) return;
    const message = (answer.body as { error?: string } | undefined)?.error;
    if (tokenIat === undefined) {
      this.checks.hold(answer.status === 401, INVARIANTS.answers, () => `${operation} without a valid token answered ${answer.status}`);
      return;
    }
    const expiresAtMs = (tokenIat + TOKEN_LIFETIME_MS / 1_000) * 1_000;
    const at = answer.admittedAt ?? this.runtime.nowMs();
    if (at >= expiresAtMs) {
      this.checks.hold(
        answer.status === 401 && message === MESSAGES.invalidToken,
        INVARIANTS.answers,
        () =>
          `${operation} with a token expired ${at - expiresAtMs} ms before admission answered ${answer.status} ${JSON.stringify(answer.body)}`,
      );
    } else {
      this.checks.hold(
        answer.status !== 401,
        INVARIANTS.answers,
        () => `${operation} with a token ${expiresAtMs - at} ms from expiry answered 401 ${JSON.stringify(answer.body)}`,
      );
    }
  }
}
