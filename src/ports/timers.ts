import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waiting as a port, so tests and the simulator can move time instead of waiting it out (rule
 * SIM-clock-advance). One port for every wait of the core and the fakes: the session linger
 * (setTimeout, clearTimeout), the outbox relay's cadence and stop-time budget (sleep, nowMs) and the
 * memory bus's down poll and redelivery (sleep, setTimeout). The simulator's SimulatedTime serves it too.
 */
export interface Timers {
  /** Calls `callback` once after `ms`; the handle is for clearTimeout. A pending timer never keeps the process alive. */
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Monotonic time in ms, for deadlines: not a date (that is the Clock), and it does not follow the wall clock. */
  nowMs(): number;
}

export const systemTimers: Timers = {
  // unref: a lingering session or a pending redelivery must not hold a stopping process open.
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  // An abort rejects with AbortError; a sleeper only wants to stop waiting.
  sleep: (ms, signal) => sleep(ms, undefined, { signal }).catch(() => undefined),
  nowMs: () => performance.now(),
};
