import { describe, expect, it } from 'vitest';
import { defaultLoginGateLimits, ErrLoginBusy, LoginGate } from './login-gate.ts';

/** A derivation the test finishes by hand, so order is asserted, never time. */
function deferred(): { promise: Promise<void>; finish: () => void } {
  let finish!: () => void;
  const promise = new Promise<void>((resolve) => (finish = resolve));
  return { promise, finish };
}

/** Starts a login through the gate; `started` records the order in which work was admitted. */
function attempt(gate: LoginGate, client: string, started: string[], label = client) {
  const work = deferred();
  const outcome = gate.run(client, async () => {
    started.push(label);
    await work.promise;
    return label;
  });
  outcome.catch(() => undefined);
  return { outcome, finish: work.finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('LoginGate (rule LOGIN-gate: login must not be a CPU denial of service)', () => {
  it('runs at most `concurrency` derivations at once; the rest wait their turn', async () => {
    const gate = new LoginGate({ concurrency: 2, queuePerClient: 5, queueTotal: 10 });
    const started: string[] = [];
    const calls = ['a1', 'a2', 'a3'].map((label) => attempt(gate, 'a', started, label));
    await tick();
    expect(started).toEqual(['a1', 'a2']);
    expect(gate.load).toEqual({ running: 2, waiting: 1 });
    calls[0]!.finish();
    await tick();
    expect(started).toEqual(['a1', 'a2', 'a3']);
    calls[1]!.finish();
    calls[2]!.finish();
    await expect(Promise.all(calls.map((c) => c.outcome))).resolves.toEqual(['a1', 'a2', 'a3']);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  // One client's flood refused at once with ErrLoginBusy while another client is served is the
  // login-flood-refused-fast-victim-served conformance case (LOGIN-gate, LOGIN-gate-fair) on every transport.
  it("a freed slot goes to the client with the fewest running: the victim goes before the flooder's queue", async () => {
    const gate = new LoginGate({ concurrency: 2, queuePerClient: 3, queueTotal: 10 });
    const started: string[] = [];
    const flood = ['f1', 'f2', 'f3', 'f4', 'f5'].map((label) => attempt(gate, 'flooder', started, label));
    const victim = attempt(gate, 'victim', started);
    flood[0]!.finish();
    await tick();
    expect(started).toEqual(['f1', 'f2', 'victim']);
    victim.finish();
    await expect(victim.outcome).resolves.toBe('victim');
    for (const c of flood) c.finish();
  });

  it('when the whole queue is full, the longest queue gives up its newest waiter, not the newcomer', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 3, queueTotal: 3 });
    const started: string[] = [];
    const flood = ['f1', 'f2', 'f3', 'f4'].map((label) => attempt(gate, 'flooder', started, label));
    const victim = attempt(gate, 'victim', started);
    await expect(flood[3]!.outcome).rejects.toBeInstanceOf(ErrLoginBusy);
    for (const c of [...flood, victim]) c.finish();
    await expect(victim.outcome).resolves.toBe('victim');
    expect(started).toEqual(['f1', 'victim', 'f2', 'f3']);
  });

  it('with one slot, the client whose derivation just ended goes after a waiting newcomer', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 2, queueTotal: 10 });
    const started: string[] = [];
    const flood = ['f1', 'f2', 'f3'].map((label) => attempt(gate, 'flooder', started, label));
    const victim = attempt(gate, 'victim', started);
    flood[0]!.finish();
    await tick();
    expect(started).toEqual(['f1', 'victim']);
    victim.finish();
    for (const c of flood) c.finish();
    await Promise.all([victim.outcome, ...flood.map((c) => c.outcome)]);
    expect(started).toEqual(['f1', 'victim', 'f2', 'f3']);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('a failed derivation frees its slot too', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 1, queueTotal: 1 });
    await expect(gate.run('a', () => Promise.reject(new Error('scrypt failed')))).rejects.toThrow('scrypt failed');
    await expect(gate.run('a', () => Promise.resolve('ok'))).resolves.toBe('ok');
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('defaults: one derivation per core but one (at least one), up to the thread pool, a short queue', () => {
    expect(defaultLoginGateLimits(2)).toEqual({ concurrency: 1, queuePerClient: 2, queueTotal: 8 });
    expect(defaultLoginGateLimits(3).concurrency).toBe(2);
    expect(defaultLoginGateLimits(64).concurrency).toBe(4);
    expect(defaultLoginGateLimits(1).concurrency).toBe(1);
  });

  it('[LOGIN-gate] a waiting login whose caller went away leaves the queue: its work never runs, its place goes to the next', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 2, queueTotal: 2 });
    const started: string[] = [];
    const first = attempt(gate, 'a', started, 'first');
    const gone = new AbortController();
    const work = deferred();
    const leaving = gate.run('a', async () => (started.push('gone'), await work.promise, 'gone'), gone.signal);
    const rejected = leaving.catch((error: unknown) => error);
    const next = attempt(gate, 'b', started, 'next');
    await tick();
    expect(gate.load).toEqual({ running: 1, waiting: 2 });
    gone.abort(new Error('client closed'));
    expect(await rejected).toEqual(new Error('client closed'));
    expect(gate.load).toEqual({ running: 1, waiting: 1 });
    first.finish();
    await tick();
    expect(started).toEqual(['first', 'next']);
    next.finish();
    await expect(next.outcome).resolves.toBe('next');
    // Already gone before it asked: refused without waiting.
    await expect(gate.run('c', async () => 'never', AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });

  it('[LOGIN-gate] limits: at least one derivation, queues of zero or more; anything else is refused when the gate is built', () => {
    expect(() => new LoginGate({ concurrency: 0, queuePerClient: 1, queueTotal: 1 })).toThrow(RangeError);
    expect(() => new LoginGate({ concurrency: 1, queuePerClient: -1, queueTotal: 1 })).toThrow(RangeError);
    expect(() => new LoginGate({ concurrency: 1, queuePerClient: 1, queueTotal: -1 })).toThrow(RangeError);
    expect(() => new LoginGate({ concurrency: 1, queuePerClient: 0, queueTotal: 0 })).not.toThrow();
  });

  it('[LOGIN-gate] with no queue, a login past the running one is refused at once, and the next after it runs', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 0, queueTotal: 0 });
    const started: string[] = [];
    const first = attempt(gate, 'a', started, 'first');
    await expect(attempt(gate, 'b', started, 'refused').outcome).rejects.toBeInstanceOf(ErrLoginBusy);
    first.finish();
    await expect(first.outcome).resolves.toBe('first');
    const after = attempt(gate, 'b', started, 'after');
    after.finish();
    await expect(after.outcome).resolves.toBe('after');
    expect(started).toEqual(['first', 'after']);
  });

  it('[LOGIN-gate-fair] one client may have exactly queuePerClient logins waiting; the next is refused, another client still queues', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 2, queueTotal: 10 });
    const started: string[] = [];
    const own = ['a1', 'a2', 'a3'].map((label) => attempt(gate, 'a', started, label));
    const over = attempt(gate, 'a', started, 'a4');
    const other = attempt(gate, 'b', started, 'b1');
    await expect(over.outcome).rejects.toBeInstanceOf(ErrLoginBusy);
    expect(gate.load).toEqual({ running: 1, waiting: 3 });
    for (const c of [...own, other]) c.finish();
    await Promise.all([...own, other].map((c) => c.outcome));
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('[LOGIN-gate-fair] a client whose logins have all ended is a newcomer again: it waits in arrival order, not behind', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 2, queueTotal: 10 });
    const started: string[] = [];
    // a logs in twice at once and both end: nothing of a is running or waiting any more.
    const gateOf2 = new LoginGate({ concurrency: 2, queuePerClient: 2, queueTotal: 10 });
    const pair = ['a1', 'a2'].map((label) => attempt(gateOf2, 'a', [], label));
    for (const c of pair) c.finish();
    await Promise.all(pair.map((c) => c.outcome));
    expect(gateOf2.load).toEqual({ running: 0, waiting: 0 });
    // On that gate, a then b queue behind x: a arrived first and holds nothing, so a goes first.
    const x = attempt(gateOf2, 'x', started, 'x1');
    const x2 = attempt(gateOf2, 'x', started, 'x2');
    const a = attempt(gateOf2, 'a', started, 'a3');
    const b = attempt(gateOf2, 'b', started, 'b1');
    x.finish();
    await tick();
    x2.finish();
    await tick();
    expect(started).toEqual(['x1', 'x2', 'a3', 'b1']);
    for (const c of [a, b]) c.finish();
    await Promise.all([x, x2, a, b].map((c) => c.outcome));
    // The same on a one-slot gate after one ended login of a.
    const once = attempt(gate, 'a', [], 'a0');
    once.finish();
    await once.outcome;
    const order: string[] = [];
    const y = attempt(gate, 'y', order, 'y1');
    const a2 = attempt(gate, 'a', order, 'a1');
    const b2 = attempt(gate, 'b', order, 'b1');
    y.finish();
    await tick();
    expect(order).toEqual(['y1', 'a1']);
    for (const c of [a2, b2]) c.finish();
    await Promise.all([y, a2, b2].map((c) => c.outcome));
    expect(order).toEqual(['y1', 'a1', 'b1']);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });
});
