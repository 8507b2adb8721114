// The World's order steps: creates (keyed or not, abandoned, sent twice), reads, list pages and the
// recent view, each answer held to the model (IDEM-*, order shape, pages, sessions).
import type { Order } from '../src/domain/order.ts';
import { INVARIANTS } from './invariants.ts';
import { expectedPage, orderDto, sameDto, newerFirst, type OrderDto } from './oracle.ts';
import type { Replica } from './replica.ts';
import { MESSAGES, SESSION_LINGER_MS, SESSION_RECENT } from './spec-constants.ts';
import type { Route, Step } from './workload.ts';
import { CLIENT_GONE } from './world-constants.ts';
import type { Answer, Attempt, CreateRequest, Client, KeyClaim } from './world-types.ts';
import { WorldLogins } from './logins.ts';

export abstract class WorldOrders extends WorldLogins {
  /**
   * A client that goes away while its request waits: logins sent at once, the last `abandon` of them
   * given up `afterMs` later (queued in the login gate), or one create, GET or list given up on a slow
   * database. The logins run under one wait (one driver of the clock: a seed replays the same).
   */
  protected async abandon(step: Extract<Step, { op: 'abandon' }>): Promise<string> {
    const replica = this.live(step.replica);
    if (replica === undefined) return 'refused';
    const client = this.client(step.user);
    const options = { abandonAfterMs: step.afterMs };
    if (step.what === 'create') return this.sendCreate(this.newRequest(step.user, 1, true), step.replica, options);
    if (step.what === 'get') return this.get(step.user, step.replica, 'own', 0, 'direct', options);
    if (step.what === 'list') return this.list(step.user, step.replica, null, null, options);
    const body = JSON.stringify({ username: client.username, password: client.password });
    const via = this.via(client, 'direct');
    const sent = Array.from({ length: step.count }, (_, i) => {
      const controller = new AbortController();
      let gone = false;
      if (i >= step.count - step.abandon) {
        this.runtime.time.setTimeout(() => {
          gone = true;
          controller.abort(CLIENT_GONE);
          // The moment the caller left: the gate must already hold none of those who went away.
          this.checkGates();
        }, step.afterMs);
      }
      return this.handle(replica, client, 'login', { body }, undefined, via, controller, () => gone);
    });
    const answers = await this.await(Promise.all(sent), 60_000);
    if (answers === undefined) return 'in flight';
    for (const answer of answers) {
      if (answer.status === 'gone' || !replica.alive) continue;
      this.checkAnswer('login', answer, undefined);
      if (answer.status === 200) {
        const token = (answer.body as { token: string }).token;
        client.token = token;
        client.stale = false;
        client.tokenIat = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { iat: number }).iat;
      }
    }
    // Right after the last caller left: the gate must hold none of those who went away.
    this.checkGates();
    return answers.map((a) => a.status).join(',');
  }

  protected async sendCreate(
    request: CreateRequest,
    replica: number,
    options: { abandonAfterMs?: number; twice?: boolean } = {},
  ): Promise<string> {
    const client = this.client(request.user);
    const attempt: Attempt = { at: this.runtime.nowMs(), status: undefined, orderId: undefined };
    request.attempts.push(attempt);
    const twinAttempt: Attempt | undefined = options.twice === true ? { at: attempt.at, status: undefined, orderId: undefined } : undefined;
    if (twinAttempt !== undefined) request.attempts.push(twinAttempt);
    const first = this.replicas[replica % this.replicas.length] as Replica;
    const sends = twinAttempt === undefined ? 1 : 2;
    const headers: Record<string, string> = request.key === undefined ? {} : { 'idempotency-key': `"${request.key}"` };
    const keyId = `${request.user}/${request.key}`;
    // The key as the model held it when this attempt was sent, and whether another attempt with it was
    // open then or is sent while this one is (either outcome of such a race is accepted).
    const claimBefore = this.claims.get(keyId);
    const openBefore = request.key === undefined ? 0 : (this.keyFlights.get(keyId) ?? 0);
    const sendsBefore = this.keySends.get(keyId) ?? 0;
    if (request.key !== undefined) {
      this.keyFlights.set(keyId, openBefore + sends);
      this.keySends.set(keyId, sendsBefore + sends);
    }
    const racing = (): boolean => openBefore > 0 || (this.keySends.get(keyId) ?? 0) > sendsBefore + 1;
    const status = await this.send(
      replica,
      client,
      'createOrder',
      { body: JSON.stringify({ item: request.item, quantity: request.quantity }), headers },
      (answer, served) => {
        const mine = served === first || twinAttempt === undefined ? attempt : twinAttempt;
        mine.status = answer.status;
        if (request.key !== undefined && !racing()) this.checkKeyAnswer(request, answer, claimBefore);
        if (request.quantity <= 0)
          this.checks.hold(answer.status !== 201, INVARIANTS.answers, () => `create with quantity ${request.quantity} answered 201`);
        if (answer.status !== 201) return;
        const dto = answer.body as OrderDto;
        mine.orderId = dto.id;
        const committed = this.committed.get(dto.id);
        this.checks.hold(
          committed !== undefined && sameDto(orderDto(committed.order), dto),
          INVARIANTS.readable,
          () => `201 ${JSON.stringify(dto)} is not what the database holds`,
        );
        const original = committed === undefined ? undefined : this.requestOf(committed.order);
        this.checks.hold(
          original !== undefined && original.key === request.key && original.user === request.user,
          INVARIANTS.keyOnce,
          () => `201 for ${request.item} (key ${request.key}) carried ${JSON.stringify(dto)}`,
        );
        this.answered.set(dto.id, dto);
      },
      {
        ...(options.abandonAfterMs === undefined ? {} : { abandonAfterMs: options.abandonAfterMs }),
        ...(twinAttempt === undefined ? {} : { twin: replica + 1 }),
        // The attempt stays open until its work ends, answered or not.
        settled: () => {
          if (request.key !== undefined) this.keyFlights.set(keyId, (this.keyFlights.get(keyId) ?? 1) - 1);
        },
      },
    );
    if (attempt.status === undefined) attempt.status = status;
    if (status === 201 && attempt.orderId !== undefined) client.known.push(attempt.orderId);
    return `${status}${attempt.orderId === undefined ? '' : ` ${attempt.orderId}`}`;
  }

  /**
   * IDEM-replay / IDEM-mismatch / IDEM-expiry, from the explorer's model of the key's claim at the
   * moment the service started the create: alive with the same body, the claim's order; alive with
   * another body, 422; expired or never claimed, a new order. While another attempt with the key is
   * open, either outcome of that race is accepted.
   */
  protected checkKeyAnswer(request: CreateRequest, answer: Answer, claim: KeyClaim | undefined): void {
    const status = answer.status;
    if (status !== 201 && status !== 422) return;
    const at = answer.admittedAt ?? this.runtime.nowMs();
    // An attempt in flight across its key's expiry may see the key either way (see onCommitted).
    if (claim !== undefined && at < claim.expiresAt && claim.expiresAt <= this.runtime.nowMs()) return;
    const alive = claim !== undefined && claim.expiresAt > at;
    const sameBody = alive && claim.item === request.item && claim.quantity === request.quantity;
    const want = !alive ? 'a new order' : sameBody ? `201 with order ${claim.orderId}` : '422';
    const got = status === 422 ? '422' : (answer.body as OrderDto).id;
    const ok =
      status === 422
        ? alive && !sameBody && (answer.body as { error?: string }).error === MESSAGES.keyReused
        : alive
          ? sameBody && got === claim.orderId
          : got !== claim?.orderId;
    this.checks.hold(
      ok,
      INVARIANTS.keyOnce,
      () =>
        `key ${request.key} of user${request.user} with ${request.item} x${request.quantity}, started at ${at}, answered ${status} ${JSON.stringify(answer.body)}; ` +
        `want ${want} (claim ${claim === undefined ? 'none' : `${claim.orderId} for ${claim.item} x${claim.quantity} until ${claim.expiresAt}`})`,
    );
  }

  protected async get(
    user: number,
    replica: number,
    target: 'own' | 'other' | 'missing' | 'malformed',
    pick: number,
    route: Route,
    options: { abandonAfterMs?: number } = {},
  ): Promise<string> {
    const client = this.client(user);
    let id: string;
    let expect = target;
    const others = this.clients.filter((c) => c !== client).flatMap((c) => c.known);
    if (target === 'own' && client.known.length > 0) id = client.known[pick % client.known.length] as string;
    else if (target === 'other' && others.length > 0) id = others[pick % others.length] as string;
    else if (target === 'malformed') id = pick % 2 === 0 ? 'not-a-uuid' : `${this.ids.uuid()}x`;
    else {
      id = this.ids.uuid();
      expect = 'missing';
    }
    return this.getById(client, replica, id, expect, route, options);
  }

  protected async getById(
    client: Client,
    replica: number,
    id: string,
    expect: 'own' | 'other' | 'missing' | 'malformed',
    route: Route,
    options: { abandonAfterMs?: number } = {},
  ): Promise<string> {
    const status = await this.send(
      replica,
      client,
      'getOrder',
      { params: { id } },
      (answer) => {
        const s = answer.status;
        if (s === 401 || s === 429 || s === 'refused' || s === 'gone') return;
        const want = { own: [200, 500], other: [403, 500], missing: [404, 500], malformed: [400] }[expect];
        const message = { own: undefined, other: MESSAGES.forbidden, missing: MESSAGES.notFound, malformed: MESSAGES.invalidOrderId }[
          expect
        ];
        this.checks.hold(
          want.includes(s) && (s !== want[0] || message === undefined || (answer.body as { error?: string }).error === message),
          INVARIANTS.get,
          () => `GET of ${expect} order ${id} by user${client.index} answered ${s} ${JSON.stringify(answer.body)}`,
        );
        if (s !== 200) return;
        const committed = this.committed.get(id);
        this.checks.hold(
          committed !== undefined && sameDto(orderDto(committed.order), answer.body as OrderDto),
          INVARIANTS.get,
          () =>
            `GET ${id} answered ${JSON.stringify(answer.body)}, the database holds ${JSON.stringify(committed && orderDto(committed.order))}`,
        );
      },
      { ...options, route },
    );
    return `${status} ${expect}`;
  }

  /**
   * EXPLORE-list: every page holds only the caller's orders as stored, newest first, without repeats;
   * and when nothing of the caller's was committed while it ran, exactly the explorer's slice of them
   * (spec 4.1 rule 6's clamps, read by the explorer: explore/oracle.ts).
   */
  protected async list(
    user: number,
    replica: number,
    limit: string | null,
    offset: string | null,
    options: { abandonAfterMs?: number } = {},
  ): Promise<string> {
    const client = this.client(user);
    const query = new URLSearchParams();
    if (limit !== null) query.set('limit', limit);
    if (offset !== null) query.set('offset', offset);
    const mine = (): Order[] => [...this.committed.values()].filter((c) => c.order.userId === client.userId).map((c) => c.order);
    const before = mine().length;
    let ids: string[] = [];
    const status = await this.send(
      replica,
      client,
      'listOrders',
      { query },
      (answer) => {
        if (answer.status !== 200) return;
        const orders = (answer.body as { orders: OrderDto[] }).orders;
        ids = orders.map((o) => o.id);
        const all = mine();
        const expected = expectedPage(all, limit, offset);
        this.checks.hold(new Set(ids).size === ids.length, INVARIANTS.list, () => `a page repeats an order: ${ids.join(',')}`);
        for (let i = 0; i < orders.length; i++) {
          const dto = orders[i] as OrderDto;
          const committed = this.committed.get(dto.id);
          this.checks.hold(
            committed !== undefined && committed.order.userId === client.userId,
            INVARIANTS.list,
            () => `user${user}'s page holds ${dto.id}, not theirs`,
          );
          this.checks.hold(
            committed !== undefined && sameDto(orderDto(committed.order), dto),
            INVARIANTS.list,
            () => `listed ${JSON.stringify(dto)} differs from the database`,
          );
          const next = orders[i + 1];
          if (next !== undefined)
            this.checks.hold(newerFirst(dto, next), INVARIANTS.list, () => `page not newest first: ${dto.id} before ${next.id}`);
        }
        if (all.length === before) {
          this.checks.hold(
            ids.length === expected.length && ids.every((id, i) => id === expected[i]?.id),
            INVARIANTS.list,
            () =>
              `limit=${limit} offset=${offset} of user${user}'s ${all.length} orders answered ${ids.length} (${ids.slice(0, 3).join(',')}…), want ${expected.length} (${expected
                .slice(0, 3)
                .map((o) => o.id)
                .join(',')}…)`,
          );
        } else {
          this.checks.hold(
            ids.length <= expected.length + (all.length - before),
            INVARIANTS.list,
            () => `a page of ${ids.length} for ${limit}`,
          );
        }
        for (const id of ids) if (!client.known.includes(id)) client.known.push(id);
      },
      options,
    );
    return `${status} ${ids.length}`;
  }

  /**
   * EXPLORE-recent and EXPLORE-session-retention: the list is the explorer's model of that session (the
   * last SESSION_RECENT distinct views, newest first): intact while it was used within the linger
   * window, empty once the window passed (a new session), never more than SESSION_RECENT, no repeats.
   */
  protected async recent(user: number, replica: number): Promise<string> {
    const client = this.client(user);
    let recent: string[] = [];
    const key = (served: Replica): string => this.sessionKey(served, client);
    // The model as it stood when the request was sent, and whether another request of this user was open there.
    const target = this.replicas[replica % this.replicas.length] as Replica;
    const stored = this.sessions.get(key(target));
    const model = stored === undefined ? undefined : { recent: [...stored.recent], lastUse: stored.lastUse };
    const racing = (this.userFlights.get(key(target)) ?? 0) > 0;
    const status = await this.send(replica, client, 'recent', {}, (answer, served) => {
      if (answer.status !== 200) return;
      recent = (answer.body as { recent: string[] }).recent;
      const viewed = this.views.get(key(served)) ?? new Set();
      this.checks.hold(
        recent.length <= SESSION_RECENT,
        INVARIANTS.recent,
        () => `recent holds ${recent.length} > SESSION_RECENT ${SESSION_RECENT}`,
      );
      this.checks.hold(new Set(recent).size === recent.length, INVARIANTS.recent, () => `recent repeats an id: ${recent.join(',')}`);
      this.checks.hold(
        recent.every((id) => viewed.has(id)),
        INVARIANTS.recent,
        () =>
          `recent of user${user} on replica ${served.index} holds ${recent.filter((id) => !viewed.has(id)).join(',')}, never viewed there`,
      );
      if (racing || answer.admittedAt === undefined) return;
      const last = model?.lastUse;
      const expected = model !== undefined && answer.admittedAt < model.lastUse + SESSION_LINGER_MS ? model.recent : [];
      this.checks.hold(
        recent.length === expected.length && recent.every((id, i) => id === expected[i]),
        INVARIANTS.retention,
        () =>
          `recent of user${user} on replica ${served.index} is [${recent.join(',')}], want [${expected.join(',')}]: ` +
          (last === undefined
            ? 'no session'
            : `session last used ${(answer.admittedAt as number) - last} ms before (linger ${SESSION_LINGER_MS} ms)`),
      );
    });
    return `${status} ${recent.length}`;
  }
}
