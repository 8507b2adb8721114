// The after-run drain: heal every fault, bring every replica back, let the relays empty the outbox,
// then run the checks of the whole history (after-run-checks.ts). The top of the World's layers.
import { INVARIANTS } from './invariants.ts';
import type { Replica } from './replica.ts';
import { troubleOf } from './sim-fakes.ts';
import { RELAY } from './spec-constants.ts';
import { WorldAfterRunChecks } from './after-run-checks.ts';

export class World extends WorldAfterRunChecks {
  /** Heal, bring every replica back, let time pass (the relay loops drain the outbox), then the checks of the whole history. */
  async finish(): Promise<void> {
    for (const target of ['database', 'cache', 'publisher'] as const) troubleOf(this.backends, target).reset();
    for (const replica of this.replicas) replica.lostAcks = 0;
    // Everything still in flight lands (a graceful stop too); then every replica is back.
    await this.runtime.runUntil(() => this.flights.size === 0, this.runtime.nowMs() + 60 * 60_000);
    // The relay retries for as long as the broker or the database is away (EVT-7-delivery): once both
    // answer again, the replicas still running drain the outbox on their own, without a restart.
    const alive = this.replicas.filter((r) => r.alive).length;
    if (alive > 0) {
      const drained = await this.runtime.runUntil(() => this.backends.store.pendingEvents().length === 0, this.runtime.nowMs() + 60_000);
      this.checks.hold(
        drained,
        INVARIANTS.announced,
        () =>
          `${this.backends.store.pendingEvents().length} events still pending 60 s after every backend healed, with ${alive} replica(s) running`,
      );
    }
    for (let r = 0; r < this.replicas.length; r++) {
      const current = this.replicas[r] as Replica;
      if (!current.alive) this.replicas[r] = this.newReplica(r, current.incarnation + 1);
    }
    await this.runtime.settle();
    // The relays' own loops drain the outbox, redeliveries come back: quiet means nothing pending in the
    // outbox or the bus and nothing in any notifier's hands (a dead one's too), and it stays so for a while
    // (a failed delivery comes back on the bus's redelivery timer).
    const quiet = (): boolean =>
      this.backends.store.pendingEvents().length === 0 &&
      this.backends.bus.unacknowledged === 0 &&
      this.incarnations.every((r) => r.inHand.size === 0);
    for (let round = 0; round < 100; round++) {
      await this.runtime.runUntil(quiet, this.runtime.nowMs() + 30_000);
      let stayed = true;
      for (let i = 0; i < 20 && stayed; i++) {
        await this.runtime.jump(RELAY.sampleMs / 2);
        stayed = quiet();
      }
      if (stayed) break;
    }
    const announced = this.lines.filter((line) => line.msg === 'order placed').length;
    this.note(
      `final t=${this.runtime.time.offsetMs} orders=${this.committed.size} announced=${announced} pending=${this.backends.store.pendingEvents().length} ` +
        `duplicates-dropped=${this.backends.bus.duplicates} died-holding=${this.diedHolding.size} closed-sessions=${this.lines.filter((l) => l.msg === 'session: closed').length}`,
    );
    for (let r = 0; r < this.replicas.length; r++) await this.health(r, true);
    this.checkOrders();
    this.checkAnnounced();
    await this.checkReadable();
    await this.checkSessions();
  }
}
