import { getEventListeners } from 'node:events';
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

  it('[LOGIN-gate] a refusal is ErrLoginBusy, named and worded as the error table and the logs show it', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 0, queueTotal: 0 });
    const first = attempt(gate, 'a', []);
    const error = await gate.run('b', async () => 'never').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrLoginBusy);
    expect(error).toMatchObject({ name: 'ErrLoginBusy', kind: 'ErrLoginBusy', message: 'too many login attempts' });
    first.finish();
    await first.outcome;
  });

  it('[LOGIN-gate] the whole queue holds 8 logins per running derivation by default', () => {
    expect(defaultLoginGateLimits(3)).toEqual({ concurrency: 2, queuePerClient: 2, queueTotal: 16 });
    expect(defaultLoginGateLimits(64)).toEqual({ concurrency: 4, queuePerClient: 2, queueTotal: 32 });
  });

  it('[LOGIN-gate] limits refused when the gate is built are named in the error', () => {
    expect(() => new LoginGate({ concurrency: 0, queuePerClient: 1, queueTotal: 1 })).toThrow(/login gate: limits/);
  });

  it('[LOGIN-gate-fair] a client with two running and one ended still counts one running: the slot goes to the least recently served of equals', async () => {
    const gate = new LoginGate({ concurrency: 3, queuePerClient: 2, queueTotal: 10 });
    const started: string[] = [];
    const b1 = attempt(gate, 'b', started, 'b1');
    const [a1, a2] = ['a1', 'a2'].map((label) => attempt(gate, 'a', started, label));
    // a and b wait with one each; when a1 ends, a (1 running, served last) and b (1 running) are equal.
    const a3 = attempt(gate, 'a', started, 'a3');
    const b2 = attempt(gate, 'b', started, 'b2');
    await tick();
    expect(started).toEqual(['b1', 'a1', 'a2']);
    a1!.finish();
    await tick();
    expect(started).toEqual(['b1', 'a1', 'a2', 'b2']);
    for (const c of [b1, a2!, a3, b2]) c.finish();
    await Promise.all([b1, a1!, a2!, a3, b2].map((c) => c.outcome));
    expect(started).toEqual(['b1', 'a1', 'a2', 'b2', 'a3']);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('[LOGIN-gate-fair] a client admitted from the queue counts as running: its next login waits behind a client with none running', async () => {
    const gate = new LoginGate({ concurrency: 2, queuePerClient: 2, queueTotal: 10 });
    const started: string[] = [];
    const [a1, a2, a3] = ['a1', 'a2', 'a3'].map((label) => attempt(gate, 'a', started, label));
    const [b1, b2] = ['b1', 'b2'].map((label) => attempt(gate, 'b', started, label));
    a1!.finish();
    await tick();
    expect(started).toEqual(['a1', 'a2', 'b1']);
    // b runs b1, a runs nothing now: a's waiting login goes before b's, which was served last.
    a2!.finish();
    await tick();
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
    for (const c of [a3!, b1!, b2!]) c.finish();
    await Promise.all([a1!, a2!, a3!, b1!, b2!].map((c) => c.outcome));
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'b2']);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('[LOGIN-gate-fair] a freed slot goes to the client with fewer running even when it was served more recently', async () => {
    const gate = new LoginGate({ concurrency: 4, queuePerClient: 2, queueTotal: 10 });
    const started: string[] = [];
    const running = [
      attempt(gate, 'a', started, 'a1'),
      attempt(gate, 'a', started, 'a2'),
      attempt(gate, 'b', started, 'b1'),
      attempt(gate, 'c', started, 'c1'),
    ];
    const b2 = attempt(gate, 'b', started, 'b2');
    const a3 = attempt(gate, 'a', started, 'a3');
    running[3]!.finish();
    await tick();
    expect(started).toEqual(['a1', 'a2', 'b1', 'c1', 'b2']);
    for (const c of [...running, b2, a3]) c.finish();
    await Promise.all([...running, b2, a3].map((c) => c.outcome));
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('[LOGIN-gate-fair] a freed slot goes to the client with fewer running even when it queued later and was served more recently', async () => {
    const gate = new LoginGate({ concurrency: 2, queuePerClient: 2, queueTotal: 10 });
    const started: string[] = [];
    const x1 = attempt(gate, 'x', started, 'x1');
    const y1 = attempt(gate, 'y', started, 'y1');
    const x2 = attempt(gate, 'x', started, 'x2');
    const y2 = attempt(gate, 'y', started, 'y2');
    // y1 ends: y has none running (x has one) though it was served after x and queued after it.
    y1.finish();
    await tick();
    expect(started).toEqual(['x1', 'y1', 'y2']);
    for (const c of [x1, x2, y2]) c.finish();
    await Promise.all([x1, y1, x2, y2].map((c) => c.outcome));
    expect(started).toEqual(['x1', 'y1', 'y2', 'x2']);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('[LOGIN-gate-fair] a client with a login still waiting keeps when it was last served: a newcomer goes first, then the least recently served', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 2, queueTotal: 10 });
    const started: string[] = [];
    const o1 = attempt(gate, 'o', started, 'o1');
    const d1 = attempt(gate, 'd', started, 'd1');
    const o2 = attempt(gate, 'o', started, 'o2');
    o1.finish();
    await tick();
    expect(started).toEqual(['o1', 'd1']);
    const d2 = attempt(gate, 'd', started, 'd2');
    const p1 = attempt(gate, 'p', started, 'p1');
    d1.finish();
    await tick();
    expect(started).toEqual(['o1', 'd1', 'p1']);
    // o (served first, o2 waiting since) goes before d (served after it).
    p1.finish();
    await tick();
    expect(started).toEqual(['o1', 'd1', 'p1', 'o2']);
    for (const c of [o2, d2]) c.finish();
    await Promise.all([o1, d1, o2, d2, p1].map((c) => c.outcome));
    expect(started).toEqual(['o1', 'd1', 'p1', 'o2', 'd2']);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it("[LOGIN-gate] a waiting login that leaves, first or later in its client's queue, takes only itself out: the client's next login keeps its turn", async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 3, queueTotal: 10 });
    const started: string[] = [];
    const x1 = attempt(gate, 'x', started, 'x1');
    const [first, second] = [new AbortController(), new AbortController()];
    const a1 = gate.run('a', async () => (started.push('a1'), 'a1'), first.signal).catch((error: unknown) => error);
    const a2 = gate.run('a', async () => (started.push('a2'), 'a2'), second.signal).catch((error: unknown) => error);
    const a3 = attempt(gate, 'a', started, 'a3');
    await tick();
    expect(gate.load).toEqual({ running: 1, waiting: 3 });
    second.abort(new Error('second gone'));
    expect(gate.load).toEqual({ running: 1, waiting: 2 });
    first.abort(new Error('first gone'));
    expect(gate.load).toEqual({ running: 1, waiting: 1 });
    expect(await a2).toEqual(new Error('second gone'));
    expect(await a1).toEqual(new Error('first gone'));
    x1.finish();
    await tick();
    expect(started).toEqual(['x1', 'a3']);
    a3.finish();
    await expect(a3.outcome).resolves.toBe('a3');
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it("[LOGIN-gate] a login leaves no listener on its caller's signal once it has run, been refused or left", async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 2, queueTotal: 2 });
    const listening = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;
    const x1 = attempt(gate, 'x', []);
    const [admitted, dropped, left] = [new AbortController(), new AbortController(), new AbortController()];
    const a1 = gate.run('a', async () => 'a1', admitted.signal);
    const a2 = gate.run('a', async () => 'a2', dropped.signal).catch((error: unknown) => error);
    expect([listening(admitted.signal), listening(dropped.signal)]).toEqual([1, 1]);
    // The queue is full: a's newest waiter is refused to let b in.
    const b1 = gate.run('b', async () => 'b1', left.signal).catch((error: unknown) => error);
    expect(await a2).toBeInstanceOf(ErrLoginBusy);
    expect(listening(dropped.signal)).toBe(0);
    left.abort(new Error('gone'));
    expect(await b1).toEqual(new Error('gone'));
    expect(listening(left.signal)).toBe(0);
    x1.finish();
    await expect(a1).resolves.toBe('a1');
    expect(listening(admitted.signal)).toBe(0);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('[LOGIN-gate-fair] with the whole queue full, the longest queue gives up its newest waiter: not a shorter queue that came later', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 3, queueTotal: 3 });
    const started: string[] = [];
    const x1 = attempt(gate, 'x', started, 'x1');
    const [a1, a2] = ['a1', 'a2'].map((label) => attempt(gate, 'a', started, label));
    const b1 = attempt(gate, 'b', started, 'b1');
    const c1 = attempt(gate, 'c', started, 'c1');
    await expect(a2!.outcome).rejects.toBeInstanceOf(ErrLoginBusy);
    expect(gate.load).toEqual({ running: 1, waiting: 3 });
    for (const c of [x1, a1!, b1, c1]) c.finish();
    await Promise.all([x1, a1!, b1, c1].map((c) => c.outcome));
    expect(started).toEqual(['x1', 'a1', 'b1', 'c1']);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('[LOGIN-gate-fair] with the whole queue full and no queue longer than its own, the newcomer is refused and the others keep their places', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 3, queueTotal: 2 });
    const started: string[] = [];
    const x1 = attempt(gate, 'x', started, 'x1');
    const a1 = attempt(gate, 'a', started, 'a1');
    const b1 = attempt(gate, 'b', started, 'b1');
    const a2 = attempt(gate, 'a', started, 'a2');
    await expect(a2.outcome).rejects.toBeInstanceOf(ErrLoginBusy);
    expect(gate.load).toEqual({ running: 1, waiting: 2 });
    for (const c of [x1, a1, b1]) c.finish();
    await Promise.all([x1, a1, b1].map((c) => c.outcome));
    expect(started).toEqual(['x1', 'a1', 'b1']);
  });

  it('[LOGIN-gate-fair] a client whose only waiter was given up is gone from the queue: the slot goes to the newcomer', async () => {
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 1, queueTotal: 1 });
    const started: string[] = [];
    const x1 = attempt(gate, 'x', started, 'x1');
    const a1 = attempt(gate, 'a', started, 'a1');
    const b1 = attempt(gate, 'b', started, 'b1');
    await expect(a1.outcome).rejects.toBeInstanceOf(ErrLoginBusy);
    x1.finish();
    await expect(x1.outcome).resolves.toBe('x1');
    await tick();
    expect(started).toEqual(['x1', 'b1']);
    b1.finish();
    await expect(b1.outcome).resolves.toBe('b1');
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });
});
