// The simulator's model, written once for every transport (rules SIM-*): the fakes' trouble switches and
// the simulated clock, validated here, every change logged at warn as `simulator: …` so an operator reading
// the log sees why a backend went away (rule SIM-logged). simulator-routes.ts puts it on the admin listener.
import type { Trouble } from '../fakes/trouble.ts';
import { ErrNotFound, ErrValidation } from '../src/domain/errors.ts';
import type { Logger } from '../src/ports/logger.ts';
import type { SimulatedTime } from './simulated-time.ts';

/** Bounds of the control API (rules SIM-component-settings, SIM-clock-advance). */
export const MAX_LATENCY_MS = 10_000;
export const MAX_FAIL_NEXT = 1_000;
/** One advance may move the clock at most a day (past any JWT_EXPIRY worth testing), ... */
export const MAX_ADVANCE_MS = 24 * 3_600_000;
/** ... and all advances together at most a year, so the clock stays a sane date. */
export const MAX_OFFSET_MS = 365 * 24 * 3_600_000;

export type ComponentState = Readonly<{ name: string; state: 'up' | 'down'; latencyMs: number; failNext: number }>;
export type ClockState = Readonly<{ now: string; offsetMs: number; pendingTimers: number }>;
export type SimulatorState = Readonly<{ components: readonly ComponentState[]; clock: ClockState }>;
/** A fake named as its health node (database, cache, publisher), with its trouble switch. */
type SimulatedComponent = Readonly<{ name: string; trouble: Trouble }>;

export class Simulator {
  readonly #components: ReadonlyMap<string, Trouble>;
  readonly #time: SimulatedTime;
  readonly #logger: Logger;

  constructor(options: Readonly<{ components: readonly SimulatedComponent[]; time: SimulatedTime; logger: Logger }>) {
    this.#components = new Map(options.components.map((c) => [c.name, c.trouble]));
    this.#time = options.time;
    this.#logger = options.logger;
  }

  state(): SimulatorState {
    return { components: [...this.#components.keys()].map((name) => this.#componentState(name)), clock: this.#clockState() };
  }

  /** PUT /simulator/components/{name}: every field checked before any changes; those left out keep their value. */
  setComponent(name: string, body: unknown): ComponentState {
    const trouble = this.#components.get(name);
    if (trouble === undefined) throw new ErrNotFound();
    const fields = objectOf(body, ['state', 'latencyMs', 'failNext']);
    if (Object.keys(fields).length === 0) throw new ErrValidation('give at least one of state, latencyMs, failNext');
    const { state, latencyMs, failNext } = fields;
    if (state !== undefined && state !== 'up' && state !== 'down') throw new ErrValidation('state must be up or down');
    const latency = latencyMs === undefined ? undefined : boundedInteger(latencyMs, 'latencyMs', 0, MAX_LATENCY_MS);
    const failures = failNext === undefined ? undefined : boundedInteger(failNext, 'failNext', 0, MAX_FAIL_NEXT);
    if (state === 'down') trouble.down('connection refused (simulated)');
    if (state === 'up') trouble.up();
    if (latency !== undefined) trouble.slow(latency);
    if (failures !== undefined) {
      // failNext replaces the queue rather than adding to it.
      trouble.clearFailures();
      trouble.failNext(failures, 'injected failure (simulated)');
    }
    const changed = this.#componentState(name);
    const logged = { component: name, state: changed.state, latency_ms: changed.latencyMs, fail_next: changed.failNext };
    this.#logger.warn(logged, 'simulator: component changed');
    return changed;
  }

  /** POST /simulator/clock/advance. */
  advance(body: unknown): ClockState {
    const ms = boundedInteger(objectOf(body, ['ms'])['ms'], 'ms', 1, MAX_ADVANCE_MS);
    if (this.#time.offsetMs + ms > MAX_OFFSET_MS) throw new ErrValidation(`clock offset may not exceed ${MAX_OFFSET_MS} ms`);
    const fired = this.#time.advance(ms);
    const clock = this.#clockState();
    this.#logger.warn({ ms, offset_ms: clock.offsetMs, now: clock.now, timers_fired: fired }, 'simulator: clock advanced');
    return clock;
  }

  /** POST /simulator/reset: every component up, no latency, no queued failure, real time. */
  reset(): SimulatorState {
    for (const trouble of this.#components.values()) trouble.reset();
    this.#time.reset();
    this.#logger.warn({}, 'simulator: reset');
    return this.state();
  }

  #componentState(name: string): ComponentState {
    const trouble = this.#components.get(name) as Trouble;
    return { name, state: trouble.isDown ? 'down' : 'up', latencyMs: trouble.delayMs, failNext: trouble.queuedFailures };
  }

  #clockState(): ClockState {
    return { now: this.#time.now().toISOString(), offsetMs: this.#time.offsetMs, pendingTimers: this.#time.pending.size };
  }
}

/** The body's fields: a JSON object with only `allowed` ones, else 400. */
function objectOf(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ErrValidation('body must be a JSON object');
  const unknown = Object.keys(body).find((key) => !allowed.includes(key));
  if (unknown !== undefined) throw new ErrValidation(`unknown field ${unknown}; allowed: ${allowed.join(', ')}`);
  return body as Record<string, unknown>;
}

/** Number.isInteger is false for anything but a number, so it alone refuses strings, null and the rest. */
function boundedInteger(value: unknown, name: string, min: number, max: number): number {
  if (Number.isInteger(value) && (value as number) >= min && (value as number) <= max) return value as number;
  throw new ErrValidation(`${name} must be an integer from ${min} to ${max}`);
}
