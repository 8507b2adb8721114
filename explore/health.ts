// The World's health probe: a replica's health and readiness answers held to what the model knows
// of its backends (the database's trouble, the outbox backlog).
import type { SessionKey } from '../src/domain/session-key.ts';
import { INVARIANTS } from './invariants.ts';
import { troubleOf, type SimTarget } from './sim-fakes.ts';
import { RELAY, SESSION_LINGER_MS } from './spec-constants.ts';
import { WorldOrders } from './orders.ts';

export abstract class WorldHealth extends WorldOrders {
  /**
   * EXPLORE-health: each down backend shows on its node while down; the publisher's node also shows an
   * outbox backlog (an event pending 10 s or more, rule EVT-7-delivery), so while the broker is up it
   * may be unhealthy only when an event was that old within the last samples. `clean` demands a clean
   * report. The sessions the replica holds are the ones the explorer expects open, none held.
   */
  protected async health(index: number, clean: boolean): Promise<string> {
    const replica = this.live(index);
    if (replica === undefined) return 'down';
    this.trackDatabase();
    const report = await this.await(replica.checker.health(), 10_000);
    if (report === undefined) return 'in flight';
    const now = this.runtime.nowMs();
    for (const name of ['database', 'cache', 'publisher'] as const) {
      const node = report.nodes?.find((n) => n.name === name);
      const down = troubleOf(this.backends, name as SimTarget).isDown;
      // The publisher's backlog is checked below, against the relay's own sample.
      const excused = name === 'publisher' && !down;
      this.checks.hold(
        node !== undefined && (excused || (node.status === 'ok') === !down),
        INVARIANTS.health,
        () =>
          `replica ${replica.index}'s health node ${name} is ${node?.status ?? 'missing'} (${node?.error ?? ''}) while the ${name} is ${down ? 'down' : 'up'}`,
      );
    }
    if (clean) this.checks.hold(report.clean, INVARIANTS.health, () => `health not clean after healing: ${JSON.stringify(report.nodes)}`);
    // The relay's metrics and its health come from one backlog sample (EVT-7-delivery): they agree, and
    // the sample is recent: its oldest event is still in the outbox, or left it (announced) within the
    // last samples, or the database was in trouble then (a sample that fails keeps the one before).
    const stats = replica.relay.stats();
    const publisher = report.nodes?.find((n) => n.name === 'publisher');
    if (publisher !== undefined && !this.backends.bus.trouble.isDown) {
      const aged = (stats.pending ?? 0) >= RELAY.unhealthyPending || (stats.oldestAgeSeconds ?? 0) >= RELAY.unhealthyAgeMs / 1_000;
      this.checks.hold(
        (publisher.status !== 'ok') === aged,
        INVARIANTS.health,
        () =>
          `publisher node ${publisher.status} (${publisher.error ?? ''}) while the relay's metrics say ${stats.pending} pending, oldest ${stats.oldestAgeSeconds} s`,
      );
      if (aged && stats.oldestAgeSeconds !== undefined) {
        const createdAt = now - stats.oldestAgeSeconds * 1_000;
        // Orders created in the same millisecond are told apart by whether any of them explains the sample.
        const candidates = [...this.committed.values()].filter((c) => Math.abs(c.order.createdAt.getTime() - createdAt) < 1);
        const pendingIds = new Set(this.backends.store.pendingEvents().map((e) => e.id));
        const recent = 2 * RELAY.sampleMs + this.backends.store.trouble.delayMs;
        const announcedAt = (id: string): number | undefined =>
          this.lines.find((l) => l.msg === 'order placed' && l.fields['order_id'] === id)?.at;
        const explained = candidates.some((c) => {
          const at = announcedAt(c.order.id);
          return pendingIds.has(c.eventId) || at === undefined || at >= now - recent;
        });
        this.checks.hold(
          candidates.length > 0 && (explained || now - this.dbCalmSince < recent + 3_000),
          INVARIANTS.health,
          () =>
            `replica ${replica.index}'s relay reports an event ${stats.oldestAgeSeconds} s old pending, ` +
            `${candidates.length === 0 ? 'which no order has' : `announced ${candidates.map((c) => now - (announcedAt(c.order.id) ?? now)).join('/')} ms ago`}: its backlog sample is stale`,
        );
      }
    }
    // Sessions: none held between steps; as many open (live or lingering) as the explorer expects.
    const counts = replica.sessions.counts();
    const open = [...this.sessions.entries()].filter(
      ([key, s]) => key.startsWith(`${replica.index}.${replica.incarnation}.`) && now < s.lastUse + SESSION_LINGER_MS,
    ).length;
    const racing = [...this.userFlights.entries()].some(([key, n]) => n > 0 && key.startsWith(`${replica.index}.${replica.incarnation}.`));
    if (!racing) {
      for (const client of this.clients) {
        const model = this.sessions.get(this.sessionKey(replica, client));
        const want = model !== undefined && now < model.lastUse + SESSION_LINGER_MS ? 'lingering' : 'absent';
        const state = replica.sessions.stateOf(client.userId as SessionKey);
        this.checks.hold(
          state === want,
          INVARIANTS.retention,
          () =>
            `user${client.index}'s session on replica ${replica.index} is ${state}, want ${want} (last used ${model === undefined ? 'never' : `${now - model.lastUse} ms ago`})`,
        );
      }
      this.checks.hold(
        counts.live === 0 && counts.live + counts.lingering === open,
        INVARIANTS.retention,
        () =>
          `replica ${replica.index} holds ${counts.live} live and ${counts.lingering} lingering sessions, the explorer expects 0 and ${open}`,
      );
    }
    return report.nodes?.map((n) => `${n.name}:${n.status}`).join(',') ?? 'none';
  }
}
