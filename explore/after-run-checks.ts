// The checks of a whole history, run once the fleet has drained: EXPLORE-no-phantom, -key-once,
// -announced, -created-readable and -sessions, from the database's and the log's side.
import { INVARIANTS } from './invariants.ts';
import { sameDto, type OrderDto } from './oracle.ts';
import { SESSION_LINGER_MS, SESSION_RECENT } from './spec-constants.ts';
import { WorldSteps } from './steps.ts';

export abstract class WorldAfterRunChecks extends WorldSteps {
  /** EXPLORE-no-phantom and EXPLORE-key-once, from the database's side. */
  protected checkOrders(): void {
    const perRequest = new Map<number, string[]>();
    for (const { order } of this.committed.values()) {
      const request = this.requestOf(order);
      this.checks.hold(
        request !== undefined && request.quantity === order.quantity,
        INVARIANTS.noPhantom,
        () => `order ${order.id} (${order.item} x${order.quantity}) answers no create`,
      );
      if (request === undefined) continue;
      const owner = this.client(request.user).userId;
      this.checks.hold(
        owner === order.userId,
        INVARIANTS.noPhantom,
        () => `order ${order.id} belongs to ${order.userId}, asked for by user${request.user}`,
      );
      perRequest.set(request.id, [...(perRequest.get(request.id) ?? []), order.id]);
    }
    for (const request of this.requests) {
      const orders = perRequest.get(request.id) ?? [];
      this.checks.hold(
        orders.length <= request.attempts.length,
        INVARIANTS.noPhantom,
        () => `${orders.length} orders for ${request.item}, sent ${request.attempts.length} times`,
      );
    }
  }

  /** EXPLORE-announced: from the notifier's `order placed` lines of every replica, dead or alive. */
  protected checkAnnounced(): void {
    const counts = new Map<string, number>();
    for (const line of this.lines) {
      if (line.msg !== 'order placed') continue;
      const id = String(line.fields['order_id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
      const committed = this.committed.get(id);
      this.checks.hold(committed !== undefined, INVARIANTS.announced, () => `announced order ${id} does not exist`);
      this.checks.hold(
        committed?.order.userId === line.fields['user_id'] && committed?.order.item === line.fields['item'],
        INVARIANTS.announced,
        () => `announced order ${id} with ${JSON.stringify(line.fields)}, the database holds ${JSON.stringify(committed?.order)}`,
      );
    }
    for (const [id, { eventId }] of this.committed) {
      const n = counts.get(id) ?? 0;
      this.checks.hold(n >= 1, INVARIANTS.announced, () => `order ${id} was never announced`);
      if (!this.diedHolding.has(eventId))
        this.checks.hold(n === 1, INVARIANTS.announced, () => `order ${id} was announced ${n} times and no replica died holding it`);
    }
  }

  /** EXPLORE-created-readable: every 201 from every replica, by its owner only. */
  protected async checkReadable(): Promise<void> {
    for (const client of this.clients) {
      client.token = undefined;
      const status = await this.login(client.index, 0, 'right');
      this.checks.hold(status === '200', INVARIANTS.readable, () => `user${client.index} cannot log in after healing: ${status}`);
    }
    let reader = 0;
    for (const [id, dto] of this.answered) {
      const committed = this.committed.get(id);
      const owner = this.clients.find((c) => c.userId === committed?.order.userId);
      for (const replica of this.replicas) {
        // The owner from every replica; everyone else from one (their 403 does not depend on the replica).
        for (const client of replica.index === 0 ? this.clients : owner === undefined ? [] : [owner]) {
          // Each read comes from an address of its own: the limiter is not what is checked here.
          const address = `10.1.${Math.floor(reader / 250)}.${reader++ % 250}`;
          const answer = await this.await(
            this.handle(replica, client, 'getOrder', { params: { id } }, client.token, {
              peer: address,
              forwardedFor: undefined,
              key: address,
            }),
            60_000,
          );
          if (client === owner) {
            this.checks.hold(
              answer?.status === 200 && sameDto(answer.body as OrderDto, dto),
              INVARIANTS.readable,
              () => `201 ${id} read by its owner from replica ${replica.index}: ${answer?.status} ${JSON.stringify(answer?.body)}`,
            );
          } else {
            this.checks.hold(
              answer?.status === 403,
              INVARIANTS.readable,
              () => `201 ${id} read by user${client.index} from replica ${replica.index}: ${answer?.status}`,
            );
          }
        }
      }
    }
  }

  /**
   * EXPLORE-session-flush: once the linger window has passed with nothing held, every session has
   * closed with its flush line, and the views those lines count are the views made on that process.
   */
  protected async checkSessions(): Promise<void> {
    await this.runtime.jump(SESSION_LINGER_MS + 1_000);
    for (const replica of this.replicas) {
      this.checks.hold(
        replica.sessions.size === 0,
        INVARIANTS.sessions,
        () => `replica ${replica.index} still holds ${replica.sessions.size} session(s) ${SESSION_LINGER_MS} ms after the last request`,
      );
    }
    const flushedViews = new Map<string, number>();
    for (const line of this.lines) {
      if (line.msg !== 'session: closed') continue;
      const user = this.clients.find((c) => c.userId === line.fields['user'])?.index ?? -1;
      const key = `${line.replica}.${line.incarnation}.${user}`;
      flushedViews.set(key, (flushedViews.get(key) ?? 0) + Number(line.fields['views']));
      const viewed = this.views.get(key) ?? new Set();
      const recent = line.fields['recent'] as string[];
      this.checks.hold(
        recent.every((id) => viewed.has(id)) && recent.length <= SESSION_RECENT,
        INVARIANTS.sessions,
        () => `flush line of ${key} holds ${recent.join(',')}`,
      );
    }
    for (const [key, views] of this.viewCounts) {
      const [replica, incarnation] = key.split('.');
      if (!this.flushed.has(`${replica}.${incarnation}`)) continue;
      this.checks.hold(
        (flushedViews.get(key) ?? 0) === views,
        INVARIANTS.sessions,
        () => `${views} views on ${key}, its flush lines count ${flushedViews.get(key) ?? 0}`,
      );
    }
  }
}
