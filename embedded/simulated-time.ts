// The clock and timers a controller moves forward: the simulator's time (rule SIM-clock-advance), the tests' FakeTimers.
import type { Clock } from '../src/ports/clock.ts';
import type { Timers } from '../src/ports/timers.ts';

/** A timer as the simulated time holds it: due at `at` on its own clock, asked for `ms`. */
export interface SimulatedTimer {
  readonly at: number;
  readonly ms: number;
}

interface Entry extends SimulatedTimer {
  at: number;
  readonly callback: () => void;
  /** The real timer standing in for it (real mode only). */
  real: NodeJS.Timeout | undefined;
}

export interface SimulatedTimeOptions {
  /**
   * The underlying time in ms. Real mode (the default, `--embedded`): Date.now, and every timer also
   * fires on its own through a real timer. Pinned mode (`realTimers: false`, unit tests): time stands
   * still unless advanced.
   */
  readonly base?: () => number;
  readonly realTimers?: boolean;
}

/**
 * One clock and one timer port that a controller can move forward (the embedded simulator, rule SIM-clock-advance;
 * the unit tests' FakeTimers). `now` is the base time plus an offset; `advance(ms)` adds to the
 * offset and fires every timer that falls due, earliest first, each seeing `now` at its due time. So
 * token expiry, cache TTL (the Clock) and session linger (the Timers) all follow one advance. Its `nowMs`
 * goes back only by reset or, in real mode, with the wall clock under it.
 */
export class SimulatedTime implements Clock, Timers {
  readonly #base: () => number;
  readonly #realTimers: boolean;
  #offsetMs = 0;
  /** Set while advance fires a timer: the timer's due time, so it sees the moment it was due. */
  #firingAt: number | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Entry>();

  constructor(options: SimulatedTimeOptions = {}) {
    this.#base = options.base ?? Date.now;
    this.#realTimers = options.realTimers ?? true;
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

  /** Timers not yet fired, by handle (read by tests and the simulator's state). */
  get pending(): ReadonlyMap<number, SimulatedTimer> {
    return this.#pending;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#nextId++;
    const entry: Entry = { at: this.nowMs() + ms, ms, callback, real: undefined };
    this.#pending.set(id, entry);
    this.#arm(id, entry);
    return id;
  }

  clearTimeout(handle: unknown): void {
    const entry = this.#pending.get(handle as number);
    if (entry === undefined) return;
    clearTimeout(entry.real);
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
      let next: [number, Entry] | undefined;
      for (const item of this.#pending) if (item[1].at <= end && (next === undefined || item[1].at < next[1].at)) next = item;
      if (next === undefined) break;
      const [id, entry] = next;
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
    this.#rearm();
    return fired;
  }

  /** Back to the base time; pending timers keep the time they had left. */
  reset(): void {
    const offset = this.#offsetMs;
    this.#offsetMs = 0;
    // The real timers stay as they are: each due time moves back by the offset as `now` does, so none is nearer or further.
    for (const entry of this.#pending.values()) entry.at -= offset;
  }

  /** The real timers of what is left, for its new distance from now. */
  #rearm(): void {
    for (const [id, entry] of this.#pending) {
      clearTimeout(entry.real);
      this.#arm(id, entry);
    }
  }

  /**
   * Real mode: a real timer fires the entry when its time comes without an advance. Whatever drops the
   * entry (clearTimeout, advance) or arms it anew (#rearm) clears this timer first, so when it fires the
   * entry is still pending.
   */
  #arm(id: number, entry: Entry): void {
    if (!this.#realTimers) return;
    entry.real = setTimeout(
      () => {
        this.#pending.delete(id);
        entry.callback();
      },
      Math.max(0, entry.at - this.nowMs()),
    ).unref();
  }
}
