// One clock and one timer port that an advance moves forward: the simulator's time (rule
// SIM-clock-advance), also the tests' FakeTimers and explore/'s scheduler.
import type { Clock } from '../src/ports/clock.ts';
import type { Timers } from '../src/ports/timers.ts';

interface Entry {
  /** Due at this time on the simulated clock. */
  at: number;
  readonly ms: number;
  readonly callback: () => void;
  /** The real timer standing in for it (real mode only). */
  real?: NodeJS.Timeout;
}

/**
 * `now` is the base time plus an offset; `advance(ms)` adds to the offset and fires every timer that falls
 * due, earliest first, each seeing `now` at its due time. So token expiry, cache TTL (the Clock) and session
 * linger (the Timers) all follow one advance. Real mode (the default, `--embedded`): the base is Date.now and
 * every timer also fires on its own through a real timer. Pinned mode (`realTimers: false`, tests): time
 * stands still unless advanced.
 */
export class SimulatedTime implements Clock, Timers {
  readonly #base: () => number;
  readonly #realTimers: boolean;
  #offsetMs = 0;
  /** Set while advance fires a timer: the timer's due time, so it sees the moment it was due. */
  #firingAt: number | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Entry>();

  constructor({ base = Date.now, realTimers = true }: { readonly base?: () => number; readonly realTimers?: boolean } = {}) {
    this.#base = base;
    this.#realTimers = realTimers;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  nowMs(): number {
    return this.#firingAt ?? this.#base() + this.#offsetMs;
  }

  /** How far ahead of the base time this clock runs. */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Timers not yet fired, by handle: when each is due and what it asked for. */
  get pending(): ReadonlyMap<number, { readonly at: number; readonly ms: number }> {
    return this.#pending;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#nextId++;
    const entry: Entry = { at: this.nowMs() + ms, ms, callback };
    this.#pending.set(id, entry);
    this.#arm(id, entry);
    return id;
  }

  clearTimeout(handle: unknown): void {
    clearTimeout(this.#pending.get(handle as number)?.real);
    this.#pending.delete(handle as number);
  }

  /** A timer as a promise: resolves when the timer fires, or at once (dropping it) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const abort = (): void => {
        this.clearTimeout(handle);
        resolve();
      };
      const handle = this.setTimeout(() => {
        signal?.removeEventListener('abort', abort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', abort); // a signal aborts once: no `once` needed
    });
  }

  /** Moves the clock `ms` forward, firing every timer due by then; returns how many fired. */
  advance(ms: number): number {
    const end = this.nowMs() + ms;
    let fired = 0;
    for (;;) {
      // The earliest due by `end`; of timers due together, the first set (a stable sort).
      const [id, entry] = [...this.#pending].filter(([, timer]) => timer.at <= end).sort(([, a], [, b]) => a.at - b.at)[0] ?? [];
      if (id === undefined || entry === undefined) break;
      this.clearTimeout(id);
      this.#firingAt = entry.at;
      try {
        entry.callback();
      } finally {
        this.#firingAt = undefined;
      }
      fired += 1;
    }
    this.#offsetMs += ms;
    // What is left is due nearer now: its real timers are armed anew for the new distance.
    for (const [id, entry] of this.#pending) {
      clearTimeout(entry.real);
      this.#arm(id, entry);
    }
    return fired;
  }

  /** Back to the base time; pending timers keep the time they had left. */
  reset(): void {
    // The real timers stay as they are: each due time moves back by the offset as `now` does.
    for (const entry of this.#pending.values()) entry.at -= this.#offsetMs;
    this.#offsetMs = 0;
  }

  /**
   * Real mode: a real timer fires the entry when its time comes without an advance. Whatever drops the entry
   * (clearTimeout, advance) or arms it anew clears this timer first, so when it fires the entry is still pending.
   */
  #arm(id: number, entry: Entry): void {
    if (!this.#realTimers) return;
    const fire = (): void => {
      this.#pending.delete(id);
      entry.callback();
    };
    entry.real = setTimeout(fire, Math.max(0, entry.at - this.nowMs())).unref();
  }
}
