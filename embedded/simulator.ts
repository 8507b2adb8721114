// The simulator's model: the fakes' fault switches and the clock, behind the /simulator routes (rules SIM-*).
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
/** The reason a simulated outage gives, as the fakes' own default does. */
const SIMULATED_OUTAGE = 'connection refused (simulated)';
const SIMULATED_FAILURE = 'injected failure (simulated)';

/** A simulated backend: a fake named as its health node (database, cache, publisher), with its trouble switch. */
export interface SimulatedComponent {
  readonly name: string;
  readonly trouble: Trouble;
}

export interface ComponentState {
  readonly name: string;
  readonly state: 'up' | 'down';
  readonly latencyMs: number;
  readonly failNext: number;
}

export interface ClockState {
  readonly now: string;
  readonly offsetMs: number;
  readonly pendingTimers: number;
}

export interface SimulatorState {
  readonly components: readonly ComponentState[];
  readonly clock: ClockState;
}

/**
 * The control API's model (rules SIM-*), written once for every transport: the admin listener parses
 * bodies and hands them here. Exists only in embedded mode (index.ts); every change is logged
 * as `simulator: …` so an operator reading the log sees why a backend went away.
 */
export class Simulator {
  readonly #components: ReadonlyMap<string, Trouble>;
  readonly #time: SimulatedTime;
  readonly #logger: Logger;

  constructor(options: { readonly components: readonly SimulatedComponent[]; readonly time: SimulatedTime; readonly logger: Logger }) {
    this.#components = new Map(options.components.map((c) => [c.name, c.trouble]));
    this.#time = options.time;
    this.#logger = options.logger;
  }

  state(): SimulatorState {
    return { components: [...this.#components.keys()].map((name) => this.#componentState(name)), clock: this.#clockState() };
  }

  /** PUT /simulator/components/{name}: only the fields given change; failNext replaces the queue. */
  setComponent(name: string, body: unknown): ComponentState {
    const trouble = this.#components.get(name);
    if (trouble === undefined) throw new ErrNotFound();
    const change = parseComponentChange(body);
    if (change.state === 'down') trouble.down(SIMULATED_OUTAGE);
    if (change.state === 'up') trouble.up();
    if (change.latencyMs !== undefined) trouble.slow(change.latencyMs);
    if (change.failNext !== undefined) {
      trouble.clearFailures();
      trouble.failNext(change.failNext, SIMULATED_FAILURE);
    }
    const state = this.#componentState(name);
    this.#logger.warn(
      { component: name, state: state.state, latency_ms: state.latencyMs, fail_next: state.failNext },
      'simulator: component changed',
    );
    return state;
  }

  /** POST /simulator/clock/advance. */
  advance(body: unknown): ClockState {
    const ms = parseAdvance(body);
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

interface ComponentChange {
  readonly state?: 'up' | 'down';
  readonly latencyMs?: number;
  readonly failNext?: number;
}

function fields(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ErrValidation('body must be a JSON object');
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw new ErrValidation(`unknown field ${unknown[0]}; allowed: ${allowed.join(', ')}`);
  return body as Record<string, unknown>;
}

function boundedInteger(value: unknown, name: string, min: number, max: number): number {
  // Number.isInteger is false for anything but a number, so it alone refuses strings, null and the rest.
  const integer = value as number;
  if (!Number.isInteger(integer) || integer < min || integer > max)
    throw new ErrValidation(`${name} must be an integer from ${min} to ${max}`);
  return integer;
}

function parseComponentChange(body: unknown): ComponentChange {
  const raw = fields(body, ['state', 'latencyMs', 'failNext']);
  if (Object.keys(raw).length === 0) throw new ErrValidation('give at least one of state, latencyMs, failNext');
  if (raw['state'] !== undefined && raw['state'] !== 'up' && raw['state'] !== 'down') throw new ErrValidation('state must be up or down');
  return {
    // Up, down or left out (undefined), which setComponent leaves alone: checked above.
    state: raw['state'] as ComponentChange['state'],
    ...(raw['latencyMs'] === undefined ? {} : { latencyMs: boundedInteger(raw['latencyMs'], 'latencyMs', 0, MAX_LATENCY_MS) }),
    ...(raw['failNext'] === undefined ? {} : { failNext: boundedInteger(raw['failNext'], 'failNext', 0, MAX_FAIL_NEXT) }),
  };
}

function parseAdvance(body: unknown): number {
  return boundedInteger(fields(body, ['ms'])['ms'], 'ms', 1, MAX_ADVANCE_MS);
}
