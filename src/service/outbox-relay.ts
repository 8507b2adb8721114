/**
 * The outbox relay (rule EVT-7-delivery): publishes pending outbox events to the broker and marks them sent,
 * retrying with backoff while the broker (or the database) is away. Every replica runs one; the store's
 * claims (FOR UPDATE SKIP LOCKED) keep them off each other's rows, and the broker's duplicate window drops a
 * re-publish of an event whose `sent` mark was lost. Stop (after the API stopped): one bounded flush.
 */
import { ErrUnavailable } from '../domain/errors.ts';
import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../ports/logger.ts';
import { systemClock, type Clock } from '../ports/clock.ts';
import type { OrderEventPublisher, OrderPlacedEnvelope } from '../ports/order-events.ts';
import type { OutboxStore } from '../ports/outbox.ts';
import { systemTimers, type Timers } from '../ports/timers.ts';

/** Our choices for the relay (spec/rules.yaml EVT-7-delivery). */
const DEFAULTS = {
  /** Events claimed and published per round. */
  batchSize: 256,
  /** Pause between rounds that found less than a full batch. */
  pollMs: 50,
  /** Backoff after a failed round: doubles from initial to max, with ±20% jitter. */
  backoffInitialMs: 100,
  backoffMaxMs: 2_000,
  /** How often the backlog is measured (metric and health). */
  sampleMs: 1_000,
  /** Health reports the backlog once this many events are pending, or the oldest is this old. */
  unhealthyPending: 10_000,
  unhealthyAgeMs: 10_000,
  /** How often expired idempotency keys are deleted. */
  purgeEveryMs: 60_000,
  /** Bound on the stop-time flush. */
  flushTimeoutMs: 5_000,
};

/** `timers`: where the relay waits and measures its stop budget, so tests step time instead of waiting. */
export type OutboxRelayOptions = Partial<typeof DEFAULTS> & { readonly clock?: Clock; readonly timers?: Timers };

/** What the relay knows about itself, for metrics (observability/metrics.ts); pending is undefined before the first sample. */
export interface OutboxRelayStats {
  readonly pending: number | undefined;
  readonly oldestAgeSeconds: number | undefined;
  readonly published: number;
  readonly publishFailures: number;
}

export class OutboxRelay implements Component {
  readonly name = 'relay';
  readonly #outbox: OutboxStore;
  readonly #publisher: OrderEventPublisher;
  readonly #logger: Logger;
  readonly #options: typeof DEFAULTS;
  readonly #clock: Clock;
  readonly #timers: Timers;
  #pending: number | undefined;
  #oldest: Date | undefined;
  #published = 0;
  #publishFailures = 0;
  /** True while rounds fail; the recovery is logged once. */
  #failing = false;

  constructor(outbox: OutboxStore, publisher: OrderEventPublisher, logger: Logger, options: OutboxRelayOptions = {}) {
    this.#outbox = outbox;
    this.#publisher = publisher;
    this.#logger = logger;
    const { clock = systemClock, timers = systemTimers, ...rest } = options;
    this.#clock = clock;
    this.#timers = timers;
    this.#options = { ...DEFAULTS, ...rest };
  }

  async run(signal: AbortSignal): Promise<void> {
    const sampler = this.#every(this.#options.sampleMs, signal, () => this.#sample());
    const purger = this.#every(this.#options.purgeEveryMs, signal, () => this.#outbox.purge(this.#clock.now()));
    let failures = 0;
    while (!signal.aborted) {
      const round = await this.relayOnce();
      if (round === 'failed') {
        failures += 1;
        await this.#timers.sleep(this.#backoff(failures), signal);
      } else {
        failures = 0;
        if (round === 'partial') await this.#timers.sleep(this.#options.pollMs, signal);
      }
    }
    await Promise.all([sampler, purger]);
  }

  /** The API has stopped (stop order): publish what is pending, within flushTimeoutMs. */
  async stop(): Promise<void> {
    const deadline = this.#timers.nowMs() + this.#options.flushTimeoutMs;
    let failures = 0;
    while (this.#timers.nowMs() < deadline) {
      const round = await this.relayOnce();
      if (round === 'partial') return;
      if (round === 'failed') {
        failures += 1;
        // Still down at stop: the events stay in the outbox for the next process.
        if (failures >= 3) return;
        await this.#timers.sleep(Math.min(this.#backoff(failures), Math.max(0, deadline - this.#timers.nowMs())));
      }
    }
  }

  /** One claim-publish-mark round: 'full' (more may be waiting), 'partial' (less than a batch) or 'failed'. */
  async relayOnce(): Promise<'full' | 'partial' | 'failed'> {
    let failed = false;
    try {
      const { claimed, sent } = await this.#outbox.relayPending(this.#options.batchSize, async (batch) => {
        const acked = await this.#publishAll(batch);
        failed = acked.length < batch.length;
        return acked;
      });
      if (failed) return 'failed';
      if (this.#failing && claimed > 0) {
        this.#failing = false;
        this.#logger.info({ component: this.name, published: sent }, 'outbox relay: publishing again');
      }
      return claimed === this.#options.batchSize ? 'full' : 'partial';
    } catch (error) {
      this.#failing = true;
      this.#logger.warn({ component: this.name, err: messageOf(error) }, 'outbox relay: outbox unavailable');
      return 'failed';
    }
  }

  stats(): OutboxRelayStats {
    const ageMs = this.#oldestAgeMs();
    const oldestAgeSeconds = ageMs === undefined ? undefined : ageMs / 1_000;
    return { pending: this.#pending, oldestAgeSeconds, published: this.#published, publishFailures: this.#publishFailures };
  }

  /**
   * Part of the publisher's health node (rule EVT-7-delivery): fails once the last sampled backlog passes a
   * threshold. Not named `health`: the relay is no health node of its own (spec 2.3 names three).
   */
  async backlogHealth(): Promise<void> {
    const pending = this.#pending ?? 0;
    const ageMs = this.#oldestAgeMs() ?? 0;
    if (pending >= this.#options.unhealthyPending || ageMs >= this.#options.unhealthyAgeMs) {
      throw new ErrUnavailable(
        `publisher: outbox backlog: ${pending} events pending, oldest ${(ageMs / 1_000).toFixed(1)} s old ` +
          `(limits ${this.#options.unhealthyPending} events, ${this.#options.unhealthyAgeMs / 1_000} s)`,
      );
    }
  }

  /** Publishes a batch concurrently; resolves with the acknowledged ids, logs the failures once per round. */
  async #publishAll(batch: readonly OrderPlacedEnvelope[]): Promise<string[]> {
    const results = await Promise.allSettled(batch.map((envelope) => this.#publisher.publishOrderPlaced(envelope)));
    const acked = batch.filter((_, i) => results[i]!.status === 'fulfilled').map((envelope) => envelope.id);
    this.#published += acked.length;
    const first = results.findIndex((result) => result.status === 'rejected');
    if (first >= 0) {
      const failed = batch.length - acked.length;
      this.#publishFailures += failed;
      this.#failing = true;
      const { id, event } = batch[first]!;
      const err = messageOf((results[first] as PromiseRejectedResult).reason);
      // Spec 6 rule 3: a failed publish is logged, one line per failed round, not per event.
      this.#logger.warn(
        { component: this.name, failed, published: acked.length, event_id: id, order_id: event.order_id, err },
        'outbox relay: publish failed',
      );
    }
    return acked;
  }

  async #sample(): Promise<void> {
    const backlog = await this.#outbox.backlog();
    this.#pending = backlog.pending;
    this.#oldest = backlog.oldestCreatedAt;
  }

  /** Runs `task` now and every `ms` until the signal aborts; a failed task is retried next time. */
  async #every(ms: number, signal: AbortSignal, task: () => Promise<unknown>): Promise<void> {
    while (!signal.aborted) {
      await task().catch(() => undefined);
      await this.#timers.sleep(ms, signal);
    }
  }

  #oldestAgeMs(): number | undefined {
    return this.#oldest === undefined ? undefined : Math.max(0, this.#clock.now().getTime() - this.#oldest.getTime());
  }

  #backoff(failures: number): number {
    const base = Math.min(this.#options.backoffMaxMs, this.#options.backoffInitialMs * 2 ** Math.min(failures - 1, 20));
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
