// The schedule's steps executed: one Step (workload.ts) turned into the requests, faults and time
// moves of the layers below, its outcome noted in the trace.
import type { Replica } from './replica.ts';
import { troubleOf } from './sim-fakes.ts';
import { CACHE_TTL_MS, NEAR_CACHE_TTL_MS, RATE_BURST, RATE_PER_SECOND, SESSION_LINGER_MS, TOKEN_LIFETIME_MS } from './spec-constants.ts';
import { describeStep, type SpreadAction, type Step, type Window } from './workload.ts';
import { bodyKey } from './world.ts';
import { WorldHealth } from './health.ts';

export abstract class WorldSteps extends WorldHealth {
  async step(index: number, step: Step): Promise<void> {
    // EXPLORE_DEBUG=1: each step as it starts, on stderr (a stalled run prints no trace, cli.ts says which seed).
    if (process.env['EXPLORE_DEBUG'] !== undefined) console.error(`step ${index} t=${this.runtime.time.offsetMs} ${describeStep(step)}`);
    const outcome = await this.execute(step);
    this.checkGates();
    this.trackDatabase();
    this.note(`${index} t=${this.runtime.time.offsetMs} ${describeStep(step)} -> ${outcome}`);
  }

  protected async execute(step: Step): Promise<string> {
    // A client without a live token logs in first (on 401 it refreshes), except to probe a token's expiry.
    const refresh = ['create', 'create-many', 'retry', 'reuse', 'get', 'list', 'recent', 'burst', 'spread', 'boundary', 'abandon'];
    if (
      refresh.includes(step.op) &&
      'user' in step &&
      !(step.op === 'boundary' && step.window === 'token') &&
      !(step.op === 'abandon' && step.what === 'login')
    ) {
      const client = this.client(step.user);
      if (client.stale || client.token === undefined) await this.login(step.user, step.replica, 'right');
    }
    switch (step.op) {
      case 'login':
        return this.login(step.user, step.replica, step.as, step.route);
      case 'login-burst':
        return this.loginBurst(step.user, step.replica, step.count);
      case 'login-storm':
        return this.loginStorm(step.replica, step.perClient);
      case 'abandon':
        return this.abandon(step);
      case 'create': {
        const request = this.newRequest(step.user, step.quantity, step.keyed);
        const outcomes = [await this.sendCreate(request, step.replica, { twice: step.twice })];
        // The client's retry policy: the same request (and key) again, on the next replica, at once.
        for (let retry = 1; retry <= step.retries && /^(timeout|refused|500)/.test(outcomes[outcomes.length - 1] as string); retry++) {
          outcomes.push(await this.sendCreate(request, step.replica + retry));
        }
        return outcomes.join(' / ');
      }
      case 'create-many': {
        const outcomes: string[] = [];
        // A batch import paced at the rate limit: one create per token refill.
        for (let i = 0; i < step.count; i++) {
          if (i > 0) await this.advance(1_000 / RATE_PER_SECOND);
          outcomes.push(await this.sendCreate(this.newRequest(step.user, 1 + (i % 9), false), step.replica));
        }
        return outcomes.map((o) => o.split(' ')[0]).join(',');
      }
      case 'retry':
        return this.retry(step.user, step.replica);
      case 'reuse':
        return this.reuse(step.user, step.replica, step.change);
      case 'get':
        return this.get(step.user, step.replica, step.target, step.pick, step.route);
      case 'list':
        return this.list(step.user, step.replica, step.limit, step.offset);
      case 'recent':
        return this.recent(step.user, step.replica);
      case 'burst': {
        const statuses: string[] = [];
        for (let i = 0; i < step.count; i++)
          statuses.push((await this.get(step.user, step.replica, 'own', i, step.route)).split(' ')[0] as string);
        return statuses.join(',');
      }
      case 'forged':
        return this.forged(step.user, step.replica, step.kind);
      case 'spread':
        return this.spread(step.user, step.replica, step.gaps, step.actions);
      case 'wait':
        await this.advance(step.ms);
        return 'ok';
      case 'boundary':
        return this.boundary(step.window, step.user, step.replica, step.deltaMs);
      case 'fault': {
        const trouble = troubleOf(this.backends, step.target);
        if (step.mode === 'down') trouble.down();
        else if (step.mode === 'slow') trouble.slow(step.amount);
        else trouble.failNext(step.amount);
        if (step.target === 'database' && step.mode !== 'slow') this.dbTroubleEpoch += 1;
        return 'ok';
      }
      case 'heal':
        troubleOf(this.backends, step.target).reset();
        return 'ok';
      case 'lost-ack': {
        const replica = this.live(step.replica);
        if (replica === undefined) return 'down';
        replica.lostAcks += 1;
        return 'ok';
      }
      case 'kill': {
        const replica = this.live(step.replica);
        if (replica === undefined) return 'down';
        for (const id of replica.kill()) this.diedHolding.add(id);
        this.flushed.delete(`${replica.index}.${replica.incarnation}`);
        this.forgetSessions(replica);
        await this.runtime.settle();
        return 'killed';
      }
      case 'stop':
        return this.stop(step.replica);
      case 'restart': {
        const current = this.replicas[step.replica] as Replica;
        if (current.alive) return 'up';
        this.replicas[step.replica] = this.newReplica(step.replica, current.incarnation + 1);
        await this.runtime.settle();
        return `incarnation ${current.incarnation + 1}`;
      }
      case 'jump':
        await this.runtime.jump(step.ms);
        return 'ok';
      case 'health':
        return this.health(step.replica, false);
      case 'scan':
        return this.scan(step.replica, step.count);
    }
  }

  /** The user's latest create sent again as it was (after an ambiguous answer, or just again). */
  protected async retry(user: number, replica: number): Promise<string> {
    const client = this.client(user);
    const last = client.requests[client.requests.length - 1];
    if (last === undefined) return 'nothing to retry';
    const status = last.attempts[last.attempts.length - 1]?.status;
    if (last.key === undefined && (status === 201 || status === 400)) return 'nothing to retry';
    return this.sendCreate(last, replica);
  }

  /** IDEM-mismatch: the key of the user's latest keyed create with another body (or the same one). */
  protected async reuse(user: number, replica: number, change: 'item' | 'quantity' | 'none'): Promise<string> {
    const client = this.client(user);
    const keyed = client.requests.filter((r) => r.key !== undefined);
    const original = keyed[keyed.length - 1];
    if (original === undefined) return 'no key to reuse';
    if (change === 'none') return this.sendCreate(original, replica);
    const id = this.requests.length;
    const item = change === 'item' ? `item-${id}` : original.item;
    const quantity = change === 'quantity' ? (original.quantity % 9) + 1 : original.quantity;
    // The same body with the same key sent before is that request again (a retry), not another one.
    const known = this.byBody.get(bodyKey(client.index, item, quantity));
    const request =
      known !== undefined && known.key === original.key
        ? known
        : this.register({ id, user: client.index, item, quantity, key: original.key, attempts: [] });
    return this.sendCreate(request, replica);
  }

  protected async stop(index: number): Promise<string> {
    const replica = this.live(index);
    if (replica === undefined) return 'down';
    let stopped = false;
    await this.await(
      replica.stop().then(() => void (stopped = true)),
      10 * 60_000,
    );
    this.forgetSessions(replica);
    return stopped ? 'stopped' : 'stopping';
  }

  /** Requests of one user inside a window: before each, time moves its gap (in pieces). */
  protected async spread(user: number, replica: number, gaps: readonly number[], actions: readonly SpreadAction[]): Promise<string> {
    const outcomes: string[] = [];
    for (let i = 0; i < gaps.length; i++) {
      await this.advance(gaps[i] as number);
      outcomes.push(await this.act(actions[i] as SpreadAction, user, replica, i));
    }
    return outcomes.join(' / ');
  }

  protected async act(action: SpreadAction, user: number, replica: number, pick: number): Promise<string> {
    switch (action) {
      case 'get':
        return this.get(user, replica, 'own', pick, 'direct');
      case 'recent':
        return this.recent(user, replica);
      case 'list':
        return this.list(user, replica, null, null);
      case 'retry':
        return this.retry(user, replica);
      case 'reuse':
        return this.reuse(user, replica, 'quantity');
    }
  }

  /**
   * Time moves to `deltaMs` from where a window of `user` ends (a session's linger, a token's expiry, a
   * key's lifetime, a cached order's TTL, the rate bucket's next token), and the request that window
   * decides is sent there: just before, on, or just after the boundary.
   */
  protected async boundary(window: Window, user: number, replicaIndex: number, deltaMs: number): Promise<string> {
    const client = this.client(user);
    const replica = this.replicas[replicaIndex % this.replicas.length] as Replica;
    const latest = [...this.committed.values()].filter((c) => c.order.userId === client.userId).at(-1);
    let end: number | undefined;
    switch (window) {
      case 'linger':
        end = this.sessions.get(this.sessionKey(replica, client))?.lastUse;
        if (end !== undefined) end += SESSION_LINGER_MS;
        break;
      case 'token':
        end = client.token === undefined ? undefined : (client.tokenIat + TOKEN_LIFETIME_MS / 1_000) * 1_000;
        break;
      case 'key': {
        const keyed = client.requests.filter((r) => r.key !== undefined).at(-1);
        end = keyed === undefined ? undefined : this.claims.get(`${user % this.clients.length}/${keyed.key}`)?.expiresAt;
        break;
      }
      case 'cache':
      case 'near-cache':
        end = latest === undefined ? undefined : latest.order.createdAt.getTime() + (window === 'cache' ? CACHE_TTL_MS : NEAR_CACHE_TTL_MS);
        break;
      case 'rate':
        end = this.lastAdmission.get(`${replica.index}.${replica.incarnation}.${client.limitKey}`);
        if (end !== undefined) end += 1_000 / RATE_PER_SECOND;
        break;
    }
    if (end === undefined) return 'no such window';
    const at = end + deltaMs;
    const moved = at > this.runtime.nowMs();
    if (moved) await this.advanceTo(at);
    let outcome: string;
    switch (window) {
      case 'linger':
        outcome = await this.recent(user, replicaIndex);
        break;
      case 'token':
        outcome = await this.list(user, replicaIndex, null, null);
        break;
      case 'key':
        outcome = await this.reuse(user, replicaIndex, 'quantity');
        break;
      case 'cache':
      case 'near-cache':
        outcome = latest === undefined ? 'none' : await this.getById(client, replicaIndex, latest.order.id, 'own', 'direct');
        break;
      case 'rate': {
        const statuses: string[] = [];
        for (let i = 0; i <= RATE_BURST; i++) statuses.push((await this.list(user, replicaIndex, '1', null)).split(' ')[0] as string);
        outcome = statuses.join(',');
        break;
      }
    }
    return `${moved ? 'at' : 'passed'} ${deltaMs}: ${outcome}`;
  }
}
