// The simulator's model (simulator.ts, rules SIM-*) on real Trouble switches and a pinned simulated time:
// every change, its bounds and refusals (as the error table answers them), and its warn lines.
import { describe, expect, it } from 'vitest';
import { Trouble } from '../fakes/trouble.ts';
import type { LogFields } from '../src/ports/logger.ts';
import { mapError } from '../src/transports/errors/table.ts';
import { SimulatedTime } from './simulated-time.ts';
import { MAX_ADVANCE_MS, MAX_FAIL_NEXT, MAX_LATENCY_MS, MAX_OFFSET_MS, Simulator } from './simulator.ts';

const NAMES = ['database', 'cache', 'publisher'] as const;
const BASE = Date.UTC(2026, 0, 1);

function setUp() {
  const troubles = new Map(NAMES.map((name) => [name, new Trouble(name)]));
  const time = new SimulatedTime({ base: () => BASE, realTimers: false });
  const logged: { level: string; fields: LogFields; msg: string }[] = [];
  const at =
    (level: string) =>
    (fields: LogFields, msg: string): void =>
      void logged.push({ level, fields, msg });
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  const simulator = new Simulator({ components: NAMES.map((name) => ({ name, trouble: troubles.get(name) as Trouble })), time, logger });
  return { simulator, troubles, time, logged };
}

/** What the admin listener answers for what `act` throws: the error table's status and Error body. */
function refusal(act: () => unknown): { status: number; body: { error: string } } {
  try {
    act();
  } catch (error) {
    const answer = mapError(error);
    return { status: answer.httpStatus, body: { error: answer.message } };
  }
  throw new Error('accepted');
}

const UP = { state: 'up', latencyMs: 0, failNext: 0 };

describe('simulator control API (rules SIM-*)', () => {
  it('[SIM-component-settings, SIM-logged] down, latency and failNext change only the fields given, answer the new state and are logged at warn', async () => {
    const { simulator, troubles, logged } = setUp();
    const cache = troubles.get('cache') as Trouble;
    expect(simulator.setComponent('cache', { state: 'down' })).toEqual({ name: 'cache', state: 'down', latencyMs: 0, failNext: 0 });
    await expect(cache.health()).rejects.toThrow('cache: connection refused (simulated)');
    expect(simulator.setComponent('cache', { latencyMs: 25 })).toEqual({ name: 'cache', state: 'down', latencyMs: 25, failNext: 0 });
    expect(simulator.setComponent('cache', { state: 'up', latencyMs: 0 })).toEqual({ name: 'cache', ...UP });
    await expect(cache.health()).resolves.toBeUndefined();
    // failNext replaces the queue rather than adding to it.
    simulator.setComponent('database', { failNext: 5 });
    expect(simulator.setComponent('database', { failNext: 2 })).toEqual({ name: 'database', state: 'up', latencyMs: 0, failNext: 2 });
    const database = troubles.get('database') as Trouble;
    await expect(database.check('get')).rejects.toThrow('database: get: injected failure (simulated)');
    await expect(database.check('get')).rejects.toThrow();
    await expect(database.check('get')).resolves.toBeUndefined();
    expect(logged.at(-1)).toEqual({
      level: 'warn',
      fields: { component: 'database', state: 'up', latency_ms: 0, fail_next: 2 },
      msg: 'simulator: component changed',
    });
    expect(simulator.state().components).toEqual(NAMES.map((name) => ({ name, ...UP })));
  });

  it('[SIM-clock-advance, SIM-logged] an advance moves the clock, fires the timers due and answers and logs the clock', () => {
    const { simulator, time, logged } = setUp();
    let fired = 0;
    time.setTimeout(() => (fired += 1), 60_000);
    time.setTimeout(() => (fired += 1), 120_000);
    const clock = { now: new Date(BASE + 90_000).toISOString(), offsetMs: 90_000, pendingTimers: 1 };
    expect(simulator.advance({ ms: 90_000 })).toEqual(clock);
    expect(fired).toBe(1);
    expect(simulator.state().clock).toEqual(clock);
    expect(logged).toEqual([
      { level: 'warn', fields: { ms: 90_000, offset_ms: 90_000, now: clock.now, timers_fired: 1 }, msg: 'simulator: clock advanced' },
    ]);
  });

  it('[SIM-clock-advance] all advances together reach a year and no further: the one past it is 400 and moves nothing', () => {
    const { simulator, time } = setUp();
    let fired = 0;
    time.setTimeout(() => (fired += 1), 1);
    for (let day = 0; day < MAX_OFFSET_MS / MAX_ADVANCE_MS; day++) simulator.advance({ ms: MAX_ADVANCE_MS });
    expect(simulator.state().clock.offsetMs).toBe(MAX_OFFSET_MS);
    time.setTimeout(() => (fired += 1), 1);
    expect(refusal(() => simulator.advance({ ms: 1 }))).toEqual({
      status: 400,
      body: { error: `clock offset may not exceed ${MAX_OFFSET_MS} ms` },
    });
    expect(simulator.state().clock).toMatchObject({ offsetMs: MAX_OFFSET_MS, pendingTimers: 1 });
    expect(fired).toBe(1);
  });

  it('[SIM-embedded-only, SIM-logged] reset brings every component up with no latency and no queued failure, and the clock back to real time', async () => {
    const { simulator, troubles, time, logged } = setUp();
    for (const name of NAMES) simulator.setComponent(name, { state: 'down', latencyMs: 10, failNext: 3 });
    let fired = 0;
    time.setTimeout(() => (fired += 1), 10_000);
    simulator.advance({ ms: 4_000 });
    expect(simulator.reset()).toEqual({
      components: NAMES.map((name) => ({ name, ...UP })),
      clock: { now: new Date(BASE).toISOString(), offsetMs: 0, pendingTimers: 1 },
    });
    await expect((troubles.get('publisher') as Trouble).check('publish')).resolves.toBeUndefined();
    expect(logged.at(-1)).toEqual({ level: 'warn', fields: {}, msg: 'simulator: reset' });
    // The pending timer kept the 6 s it had left.
    expect(simulator.advance({ ms: 5_999 }).pendingTimers).toBe(1);
    expect(simulator.advance({ ms: 1 }).pendingTimers).toBe(0);
    expect(fired).toBe(1);
  });

  it.each([
    ['an unknown component', 'nope', { state: 'down' }, 404, 'not found'],
    ['null', 'cache', null, 400, 'body must be a JSON object'],
    ['a string', 'cache', 'down', 400, 'body must be a JSON object'],
    ['an array', 'cache', [{ state: 'down' }], 400, 'body must be a JSON object'],
    ['an unknown field', 'cache', { state: 'down', color: 'red' }, 400, 'unknown field color; allowed: state, latencyMs, failNext'],
    ['no field', 'cache', {}, 400, 'give at least one of state, latencyMs, failNext'],
    ['another state', 'cache', { state: 'sideways' }, 400, 'state must be up or down'],
    [
      'latency above the bound',
      'cache',
      { latencyMs: MAX_LATENCY_MS + 1 },
      400,
      `latencyMs must be an integer from 0 to ${MAX_LATENCY_MS}`,
    ],
    ['negative latency', 'cache', { latencyMs: -1 }, 400, `latencyMs must be an integer from 0 to ${MAX_LATENCY_MS}`],
    ['a fraction of latency', 'cache', { latencyMs: 1.5 }, 400, `latencyMs must be an integer from 0 to ${MAX_LATENCY_MS}`],
    ['latency as a string', 'cache', { latencyMs: '5' }, 400, `latencyMs must be an integer from 0 to ${MAX_LATENCY_MS}`],
    ['failNext above the bound', 'cache', { failNext: MAX_FAIL_NEXT + 1 }, 400, `failNext must be an integer from 0 to ${MAX_FAIL_NEXT}`],
    ['negative failNext', 'cache', { state: 'down', failNext: -1 }, 400, `failNext must be an integer from 0 to ${MAX_FAIL_NEXT}`],
  ] as const)(
    '[SIM-embedded-only, SIM-component-settings] PUT with %s: %i with the Error body, nothing changed',
    (_what, name, body, status, error) => {
      const { simulator } = setUp();
      const before = simulator.state();
      expect(refusal(() => simulator.setComponent(name, body))).toEqual({ status, body: { error } });
      expect(simulator.state()).toEqual(before);
    },
  );

  it.each([
    ['null', null, 'body must be a JSON object'],
    ['a number', 5, 'body must be a JSON object'],
    ['an array', [5], 'body must be a JSON object'],
    ['an unknown field', { ms: 5, by: 'me' }, 'unknown field by; allowed: ms'],
    ['no ms', {}, `ms must be an integer from 1 to ${MAX_ADVANCE_MS}`],
    ['0 ms', { ms: 0 }, `ms must be an integer from 1 to ${MAX_ADVANCE_MS}`],
    ['more than a day', { ms: MAX_ADVANCE_MS + 1 }, `ms must be an integer from 1 to ${MAX_ADVANCE_MS}`],
    ['a fraction', { ms: 1.5 }, `ms must be an integer from 1 to ${MAX_ADVANCE_MS}`],
    ['a string', { ms: '5' }, `ms must be an integer from 1 to ${MAX_ADVANCE_MS}`],
  ] as const)('[SIM-clock-advance] advance with %s: 400 with the Error body, the clock unmoved', (_what, body, error) => {
    const { simulator } = setUp();
    expect(refusal(() => simulator.advance(body))).toEqual({ status: 400, body: { error } });
    expect(simulator.state().clock.offsetMs).toBe(0);
  });

  it('[SIM-component-settings, SIM-clock-advance] the bounds themselves are accepted', () => {
    const { simulator } = setUp();
    expect(simulator.setComponent('cache', { latencyMs: MAX_LATENCY_MS, failNext: MAX_FAIL_NEXT })).toMatchObject({
      latencyMs: MAX_LATENCY_MS,
      failNext: MAX_FAIL_NEXT,
    });
    expect(simulator.setComponent('cache', { latencyMs: 0, failNext: 0 })).toMatchObject({ latencyMs: 0, failNext: 0 });
    expect(simulator.advance({ ms: 1 }).offsetMs).toBe(1);
    expect(simulator.advance({ ms: MAX_ADVANCE_MS }).offsetMs).toBe(MAX_ADVANCE_MS + 1);
  });
});
