import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../test/support/fake-timers.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { sessionKeyFromVerifiedSubject, type SessionKey } from '../domain/session-key.ts';
import { createLogger } from '../observability/logger.ts';
import { Session } from './session.ts';
import { ErrNoDoneSignal, ErrNoScopeKey, ErrScopeFull } from './session-errors.ts';
import { SESSION_CAP, SESSION_LINGER_MS, SessionScope, type SessionScopeOptions } from './session-scope.ts';

const key = (subject: string): SessionKey => sessionKeyFromVerifiedSubject(subject);

function setup(options: Partial<SessionScopeOptions> = {}) {
  const logs = new LogCapture();
  const timers = new FakeTimers();
  const scope = new SessionScope({ recentCapacity: 10, logger: createLogger('debug', logs), timers, ...options });
  const closedLines = () => logs.find('session: closed');
  return { scope, logs, timers, closedLines };
}

/** A context that ends when the test aborts it (a request's done signal). */
function ctx(subject: string) {
  const controller = new AbortController();
  return { controller, context: { sessionKey: key(subject), signal: controller.signal } };
}

describe('SessionScope state table (spec 3.2)', () => {
  it('absent → live on the first acquire: an instance is constructed', () => {
    const { scope } = setup();
    expect(scope.stateOf(key('u1'))).toBe('absent');
    const lease = scope.acquire(ctx('u1').context);
    expect(scope.stateOf(key('u1'))).toBe('live');
    expect(lease.session).toBeInstanceOf(Session);
    expect(lease.session.views).toBe(0);
    expect(scope.size).toBe(1);
  });

  it('the same key shares one instance; another key gets its own', () => {
    const { scope } = setup();
    const a = scope.acquire(ctx('u1').context);
    const b = scope.acquire(ctx('u1').context);
    const c = scope.acquire(ctx('u2').context);
    expect(b.session).toBe(a.session);
    expect(c.session).not.toBe(a.session);
    expect(scope.size).toBe(2);
  });

  it('absent + cap reached → ErrScopeFull and the key stays absent', () => {
    const { scope } = setup({ cap: 3 });
    for (const subject of ['u1', 'u2', 'u3']) scope.acquire(ctx(subject).context);
    expect(() => scope.acquire(ctx('u4').context)).toThrow(ErrScopeFull);
    expect(scope.stateOf(key('u4'))).toBe('absent');
    expect(scope.size).toBe(3);
    // A key already live still gets its instance at the cap: only new instances are refused.
    expect(() => scope.acquire(ctx('u1').context)).not.toThrow();
  });

  it('lingering instances count towards the cap until they close', () => {
    const { scope, timers } = setup({ cap: 2 });
    scope.acquire(ctx('u1').context)();
    scope.acquire(ctx('u2').context)();
    expect(scope.stateOf(key('u1'))).toBe('lingering');
    expect(() => scope.acquire(ctx('u3').context)).toThrow(ErrScopeFull);
    timers.advance(SESSION_LINGER_MS);
    expect(scope.size).toBe(0);
    expect(() => scope.acquire(ctx('u3').context)).not.toThrow();
  });

  it(`the real cap: ${SESSION_CAP} keys fit, the next one is refused, quickly`, () => {
    const { scope } = setup();
    const signal = new AbortController().signal;
    for (let i = 0; i < SESSION_CAP; i += 1) {
      // Released at once, so each instance lingers (still counted) and no listener piles up on the signal.
      scope.acquire({ sessionKey: key(`user-${i}`), signal })();
    }
    expect(scope.size).toBe(SESSION_CAP);
    expect(() => scope.acquire({ sessionKey: key('one-too-many'), signal })).toThrow(ErrScopeFull);
    expect(() => scope.acquire({ sessionKey: key('one-too-many'), signal })).toThrow('session: scope full (50000 live instances)');
    expect(SESSION_CAP).toBe(50_000);
  });

  it('any state + no key → ErrNoScopeKey, nothing changes', () => {
    const { scope } = setup();
    const signal = new AbortController().signal;
    expect(() => scope.acquire({ signal })).toThrow(ErrNoScopeKey);
    expect(() => scope.acquire({ sessionKey: undefined, signal })).toThrow(ErrNoScopeKey);
    expect(scope.size).toBe(0);
    const lease = scope.acquire(ctx('u1').context);
    expect(() => scope.acquire({ signal })).toThrow(ErrNoScopeKey);
    expect(scope.stateOf(key('u1'))).toBe('live');
    lease();
    expect(() => scope.acquire({ signal })).toThrow(ErrNoScopeKey);
    expect(scope.stateOf(key('u1'))).toBe('lingering');
    expect(scope.size).toBe(1);
  });

  it('rule 2: a context without a done signal is refused (ErrNoDoneSignal) and nothing is constructed', () => {
    const { scope } = setup();
    expect(() => scope.acquire({ sessionKey: key('u1') })).toThrow(ErrNoDoneSignal);
    expect(() => scope.acquire({ sessionKey: key('u1'), signal: undefined })).toThrow(ErrNoDoneSignal);
    expect(scope.stateOf(key('u1'))).toBe('absent');
    expect(scope.size).toBe(0);
  });

  it('live → lingering on release by the last holder, with a timer of exactly SESSION_LINGER_MS (5 min)', () => {
    const { scope, timers } = setup();
    const lease = scope.acquire(ctx('u1').context);
    expect(timers.pending.size).toBe(0);
    lease();
    expect(scope.stateOf(key('u1'))).toBe('lingering');
    expect(SESSION_LINGER_MS).toBe(300_000);
    expect([...timers.pending.values()].map((t) => t.ms)).toEqual([SESSION_LINGER_MS]);
  });

  it('the default scope (no timer port) lingers on real timers and does not keep the process alive', () => {
    const scope = new SessionScope({ recentCapacity: 10, logger: createLogger('debug', new LogCapture()) });
    scope.acquire(ctx('u1').context)();
    expect(scope.stateOf(key('u1'))).toBe('lingering');
    return scope.stop();
  });

  it('two holders: the first release keeps it live; the second makes it linger', () => {
    const { scope, timers } = setup();
    const first = scope.acquire(ctx('u1').context);
    const second = scope.acquire(ctx('u1').context);
    first();
    expect(scope.stateOf(key('u1'))).toBe('live');
    expect(timers.pending.size).toBe(0);
    second();
    expect(scope.stateOf(key('u1'))).toBe('lingering');
  });

  it('lingering → live on acquire inside the window: same instance, recent preserved, the timer is cancelled', () => {
    const { scope, timers, closedLines } = setup();
    const first = scope.acquire(ctx('u1').context);
    first.session.recordView('order-1');
    first();
    timers.advance(SESSION_LINGER_MS - 1);
    expect(scope.stateOf(key('u1'))).toBe('lingering');

    const again = scope.acquire(ctx('u1').context);
    expect(scope.stateOf(key('u1'))).toBe('live');
    expect(again.session).toBe(first.session);
    expect(again.session.recent()).toEqual(['order-1']);
    expect(timers.pending.size).toBe(0);
    // The old window's end passes without closing the re-acquired instance.
    timers.advance(SESSION_LINGER_MS * 2);
    expect(scope.stateOf(key('u1'))).toBe('live');
    expect(closedLines()).toHaveLength(0);

    // Released again, a fresh full window starts.
    again();
    timers.advance(SESSION_LINGER_MS - 1);
    expect(scope.stateOf(key('u1'))).toBe('lingering');
    timers.advance(1);
    expect(scope.stateOf(key('u1'))).toBe('absent');
  });

  it('lingering → closed when the window elapses: flush logs `session: closed` with user, views, recent; then absent', () => {
    const { scope, timers, closedLines } = setup();
    const lease = scope.acquire(ctx('user-42').context);
    for (const id of ['o1', 'o2', 'o1', 'o3']) lease.session.recordView(id);
    lease();
    timers.advance(SESSION_LINGER_MS - 1);
    expect(closedLines()).toHaveLength(0);
    timers.advance(1);

    expect(scope.stateOf(key('user-42'))).toBe('absent');
    expect(scope.size).toBe(0);
    const lines = closedLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'session: closed', user: 'user-42', views: 4, recent: ['o3', 'o1', 'o2'] });

    // Next acquire constructs a fresh, empty instance.
    const fresh = scope.acquire(ctx('user-42').context);
    expect(fresh.session).not.toBe(lease.session);
    expect(fresh.session.views).toBe(0);
    expect(fresh.session.recent()).toEqual([]);
  });

  it('an instance closed with no views logs views 0 and an empty recent list', () => {
    const { scope, timers, closedLines } = setup();
    scope.acquire(ctx('u1').context)();
    timers.advance(SESSION_LINGER_MS);
    expect(closedLines()).toEqual([expect.objectContaining({ user: 'u1', views: 0, recent: [] })]);
  });
});

describe('SessionScope rules (spec 3.2)', () => {
  it('release is idempotent: calling it twice does not release another holder', () => {
    const { scope } = setup();
    const first = scope.acquire(ctx('u1').context);
    scope.acquire(ctx('u1').context);
    first();
    first();
    first[Symbol.dispose]();
    expect(scope.stateOf(key('u1'))).toBe('live');
  });

  it('release after the fallback already released is a no-op (no double release)', () => {
    const { scope } = setup();
    const one = ctx('u1');
    const first = scope.acquire(one.context);
    scope.acquire(ctx('u1').context);
    one.controller.abort();
    first();
    expect(scope.stateOf(key('u1'))).toBe('live');
  });

  it('rule 1: `using` releases at the end of the block', () => {
    const { scope } = setup();
    {
      using lease = scope.acquire(ctx('u1').context);
      lease.session.recordView('o1');
      expect(scope.stateOf(key('u1'))).toBe('live');
    }
    expect(scope.stateOf(key('u1'))).toBe('lingering');
  });

  it('rule 1: `using` releases when the block throws', () => {
    const { scope } = setup();
    expect(() => {
      using _lease = scope.acquire(ctx('u1').context);
      throw new Error('handler failed');
    }).toThrow('handler failed');
    expect(scope.stateOf(key('u1'))).toBe('lingering');
  });

  it('rule 2: a forgotten release is performed when the context ends', () => {
    const { scope, timers } = setup();
    const { controller, context } = ctx('u1');
    scope.acquire(context); // never released by the caller
    expect(scope.stateOf(key('u1'))).toBe('live');
    controller.abort();
    expect(scope.stateOf(key('u1'))).toBe('lingering');
    timers.advance(SESSION_LINGER_MS);
    expect(scope.stateOf(key('u1'))).toBe('absent');
  });

  it('rule 2: a context that already ended is accepted and released right after', async () => {
    const { scope } = setup();
    const signal = AbortSignal.abort();
    const lease = scope.acquire({ sessionKey: key('u1'), signal });
    // The caller can still use the lease it was given in the same turn.
    lease.session.recordView('o1');
    expect(scope.stateOf(key('u1'))).toBe('live');
    await Promise.resolve();
    expect(scope.stateOf(key('u1'))).toBe('lingering');
    lease(); // the caller's own release afterwards changes nothing
    expect(scope.stateOf(key('u1'))).toBe('lingering');
  });

  it('rule 2: a release removes its listener from the signal (a long-lived signal does not accumulate them)', () => {
    const { scope } = setup();
    const { controller, context } = ctx('u1');
    let added = 0;
    let removed = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added += 1;
      add(...args);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      removed += 1;
      remove(...args);
    }) as typeof signal.removeEventListener;
    for (let i = 0; i < 5; i += 1) scope.acquire(context)();
    expect(added).toBe(5);
    expect(removed).toBe(5);
  });

  it('rule 3: cancelling releases only that holder; the instance lingers and is not closed', () => {
    const { scope, closedLines } = setup();
    const one = ctx('u1');
    const lease = scope.acquire(one.context);
    lease.session.recordView('o1');
    const other = scope.acquire(ctx('u1').context);
    one.controller.abort();
    expect(scope.stateOf(key('u1'))).toBe('live');
    other();
    expect(scope.stateOf(key('u1'))).toBe('lingering');
    expect(closedLines()).toHaveLength(0);
    expect(scope.acquire(ctx('u1').context).session).toBe(lease.session);
  });

  it('rule 4: views recorded after the close was scheduled are in the flushed line, and the line is a consistent snapshot', () => {
    const { scope, timers, closedLines } = setup({ recentCapacity: 3 });
    const lease = scope.acquire(ctx('u1').context);
    lease.session.recordView('o1');
    lease();
    // A handler still holding the session object writes after its release (close already scheduled).
    lease.session.recordView('o2');
    timers.advance(SESSION_LINGER_MS);
    // Writes after the flush must not reach the logged line.
    lease.session.recordView('o3');
    lease.session.recordView('o4');
    const [line] = closedLines();
    expect(line).toMatchObject({ user: 'u1', views: 2, recent: ['o2', 'o1'] });
    expect(closedLines()).toHaveLength(1);
  });

  it('rule 4: flush runs on the scope timer, not on a request: no request is needed to close', () => {
    const { scope, timers, closedLines } = setup();
    scope.acquire(ctx('u1').context)();
    expect(closedLines()).toHaveLength(0);
    timers.advance(SESSION_LINGER_MS);
    expect(closedLines()).toHaveLength(1);
  });

  it('rule 7: linger 0 closes with its last holder, at once', () => {
    const { scope, timers, closedLines } = setup({ lingerMs: 0 });
    const first = scope.acquire(ctx('u1').context);
    const second = scope.acquire(ctx('u1').context);
    first.session.recordView('o1');
    first();
    expect(scope.stateOf(key('u1'))).toBe('live');
    second();
    expect(scope.stateOf(key('u1'))).toBe('absent');
    expect(timers.pending.size).toBe(0);
    expect(closedLines()).toEqual([expect.objectContaining({ user: 'u1', views: 1, recent: ['o1'] })]);
    expect(scope.acquire(ctx('u1').context).session).not.toBe(first.session);
  });

  it('rule 7: linger 0 with the fallback release closes when the context ends', () => {
    const { scope, closedLines } = setup({ lingerMs: 0 });
    const { controller, context } = ctx('u1');
    scope.acquire(context);
    controller.abort();
    expect(scope.stateOf(key('u1'))).toBe('absent');
    expect(closedLines()).toHaveLength(1);
  });

  it('stop() flushes every instance, live or lingering, once, and cancels the linger timers', async () => {
    const { scope, timers, closedLines } = setup();
    const held = scope.acquire(ctx('held').context);
    held.session.recordView('o-held');
    const lingering = scope.acquire(ctx('lingering').context);
    lingering.session.recordView('o-lingering');
    lingering();
    await scope.stop();

    expect(scope.size).toBe(0);
    expect(timers.pending.size).toBe(0);
    const byUser = Object.fromEntries(closedLines().map((line) => [line['user'], line]));
    expect(Object.keys(byUser).sort()).toEqual(['held', 'lingering']);
    expect(byUser['held']).toMatchObject({ views: 1, recent: ['o-held'] });
    expect(byUser['lingering']).toMatchObject({ views: 1, recent: ['o-lingering'] });

    // A holder releasing after shutdown, and time passing, do not flush again.
    held();
    timers.advance(SESSION_LINGER_MS * 2);
    expect(closedLines()).toHaveLength(2);
  });

  it('rule 5: the scope reports neither health nor readiness', () => {
    const { scope } = setup();
    expect(scope).not.toHaveProperty('health');
    expect(scope).not.toHaveProperty('ready');
  });

  it('the recent list through the scope is bounded by recentCapacity (SESSION_RECENT), most recent first, no duplicates', () => {
    const { scope } = setup({ recentCapacity: 3 });
    for (const id of ['a', 'b', 'c', 'b', 'd', 'e']) {
      using lease = scope.acquire(ctx('u1').context);
      lease.session.recordView(id);
    }
    using lease = scope.acquire(ctx('u1').context);
    expect(lease.session.recent()).toEqual(['e', 'd', 'b']);
    expect(lease.session.views).toBe(6);
  });
});

// Model-based test (STYLE.md): random sequences of acquire / release / abort / advance time against a
// model of the state table, with a small cap and a short linger so every row is reached.
describe('SessionScope model', () => {
  const CAP = 3;
  const LINGER = 100;
  const KEYS = ['k0', 'k1', 'k2', 'k3'];

  interface ModelInstance {
    state: 'live' | 'lingering';
    holders: number;
    deadline: number;
    /** Timers due at the same time fire in the order they were set. */
    lingerSeq: number;
    views: number;
  }
  interface Model {
    now: number;
    seq: number;
    instances: Map<string, ModelInstance>;
    leases: { key: string; released: boolean }[];
    closed: { user: string; views: number }[];
  }
  interface Real {
    scope: SessionScope;
    timers: FakeTimers;
    logs: LogCapture;
    leases: { lease: ReturnType<SessionScope['acquire']>; controller: AbortController }[];
  }

  function modelRelease(model: Model, index: number): void {
    const lease = model.leases[index];
    if (lease === undefined || lease.released) return;
    lease.released = true;
    const instance = model.instances.get(lease.key);
    if (instance === undefined) return;
    instance.holders -= 1;
    if (instance.holders === 0) {
      instance.state = 'lingering';
      instance.deadline = model.now + LINGER;
      instance.lingerSeq = model.seq++;
    }
  }

  function check(model: Model, real: Real): void {
    for (const k of KEYS) expect(real.scope.stateOf(key(k))).toBe(model.instances.get(k)?.state ?? 'absent');
    expect(real.scope.size).toBe(model.instances.size);
    expect(real.logs.find('session: closed').map((l) => ({ user: l['user'], views: l['views'] }))).toEqual(model.closed);
  }

  class Acquire implements fc.Command<Model, Real> {
    readonly k: string;
    constructor(k: string) {
      this.k = k;
    }
    check = () => true;
    run(model: Model, real: Real): void {
      const existing = model.instances.get(this.k);
      const controller = new AbortController();
      if (existing === undefined && model.instances.size >= CAP) {
        expect(() => real.scope.acquire({ sessionKey: key(this.k), signal: controller.signal })).toThrow(ErrScopeFull);
      } else {
        const lease = real.scope.acquire({ sessionKey: key(this.k), signal: controller.signal });
        lease.session.recordView(`order-${model.leases.length}`);
        const instance = existing ?? { state: 'live', holders: 0, deadline: 0, lingerSeq: 0, views: 0 };
        instance.state = 'live';
        instance.holders += 1;
        instance.views += 1;
        model.instances.set(this.k, instance);
        model.leases.push({ key: this.k, released: false });
        real.leases.push({ lease, controller });
      }
      check(model, real);
    }
    toString = () => `acquire(${this.k})`;
  }

  class Release implements fc.Command<Model, Real> {
    readonly index: number;
    constructor(index: number) {
      this.index = index;
    }
    check = (model: Readonly<Model>) => model.leases.length > 0;
    run(model: Model, real: Real): void {
      const i = this.index % model.leases.length;
      modelRelease(model, i);
      real.leases[i]!.lease();
      check(model, real);
    }
    toString = () => `release(#${this.index})`;
  }

  class Abort implements fc.Command<Model, Real> {
    readonly index: number;
    constructor(index: number) {
      this.index = index;
    }
    check = (model: Readonly<Model>) => model.leases.length > 0;
    run(model: Model, real: Real): void {
      const i = this.index % model.leases.length;
      modelRelease(model, i);
      real.leases[i]!.controller.abort();
      check(model, real);
    }
    toString = () => `abort(#${this.index})`;
  }

  class Advance implements fc.Command<Model, Real> {
    readonly ms: number;
    constructor(ms: number) {
      this.ms = ms;
    }
    check = () => true;
    run(model: Model, real: Real): void {
      const end = model.now + this.ms;
      const due = [...model.instances].filter(([, i]) => i.state === 'lingering' && i.deadline <= end);
      due.sort((a, b) => a[1].deadline - b[1].deadline || a[1].lingerSeq - b[1].lingerSeq);
      for (const [k, instance] of due) {
        model.instances.delete(k);
        model.closed.push({ user: k, views: instance.views });
      }
      model.now = end;
      real.timers.advance(this.ms);
      check(model, real);
    }
    toString = () => `advance(${this.ms})`;
  }

  it('matches the model over random command sequences', () => {
    const commands = [
      fc.constantFrom(...KEYS).map((k) => new Acquire(k)),
      fc.nat(20).map((i) => new Release(i)),
      fc.nat(20).map((i) => new Abort(i)),
      fc.integer({ min: 1, max: LINGER * 2 }).map((ms) => new Advance(ms)),
    ];
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 60 }), (cmds) => {
        const logs = new LogCapture();
        const timers = new FakeTimers();
        const scope = new SessionScope({ recentCapacity: 5, logger: createLogger('debug', logs), timers, lingerMs: LINGER, cap: CAP });
        fc.modelRun(() => ({ model: { now: 0, seq: 0, instances: new Map(), leases: [], closed: [] }, real: { scope, timers, logs, leases: [] } }), cmds);
      }),
      { numRuns: 300 },
    );
  });
});
