/**
 * Waiting as a port, so tests and the simulator (SimulatedTime) move time instead of waiting it out (rule
 * SIM-clock-advance): every wait of the core and the fakes, from the session linger to the relay's cadence.
 */
import { setTimeout as sleep } from 'node:timers/promises';

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
