import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../test/support/fake-timers.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { sessionKeyFromVerifiedSubject, type SessionKey } from '../domain/session-key.ts';
import { createLogger } from '../observability/logger.ts';
import { ErrScopeFull } from './session-errors.ts';
import { SESSION_LINGER_MS, SessionScope, type SessionScopeOptions } from './session-scope.ts';

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
  // Absent → live, live ↔ lingering and one instance per key are the model test below and the tagged
  // SESSION-R1-release… case in session-rules.test.ts; the default (real) timers are the
  // session-lingers-then-closes conformance case.
  it('an instance closed with no views logs views 0 and an empty recent list', () => {
    const { scope, timers, closedLines } = setup();
    scope.acquire(ctx('u1').context)();
    timers.advance(SESSION_LINGER_MS);
    expect(closedLines()).toEqual([expect.objectContaining({ user: 'u1', views: 0, recent: [] })]);
  });
});

describe('SessionScope rules (spec 3.2)', () => {
  it('rule 1: `using` releases when the block throws', () => {
    const { scope } = setup();
    expect(() => {
      using _lease = scope.acquire(ctx('u1').context);
      throw new Error('handler failed');
    }).toThrow('handler failed');
    expect(scope.stateOf(key('u1'))).toBe('lingering');
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

  /** A command that compares the real scope with the model after it ran. */
  function command(name: string, run: (model: Model, real: Real) => void, applies: (model: Readonly<Model>) => boolean = () => true): fc.Command<Model, Real> {
    return {
      check: applies,
      run(model, real) {
        run(model, real);
        for (const k of KEYS) expect(real.scope.stateOf(key(k))).toBe(model.instances.get(k)?.state ?? 'absent');
        expect(real.scope.size).toBe(model.instances.size);
        expect(real.logs.find('session: closed').map((l) => ({ user: l['user'], views: l['views'] }))).toEqual(model.closed);
      },
      toString: () => name,
    };
  }

  const acquire = (k: string) =>
    command(`acquire(${k})`, (model, real) => {
      const existing = model.instances.get(k);
      const controller = new AbortController();
      if (existing === undefined && model.instances.size >= CAP) {
        expect(() => real.scope.acquire({ sessionKey: key(k), signal: controller.signal })).toThrow(ErrScopeFull);
        return;
      }
      const lease = real.scope.acquire({ sessionKey: key(k), signal: controller.signal });
      lease.session.recordView(`order-${model.leases.length}`);
      const instance = existing ?? { state: 'live', holders: 0, deadline: 0, lingerSeq: 0, views: 0 };
      instance.state = 'live';
      instance.holders += 1;
      instance.views += 1;
      model.instances.set(k, instance);
      model.leases.push({ key: k, released: false });
      real.leases.push({ lease, controller });
    });

  /** Ends one lease, by its release function or by aborting its context (the fallback release). */
  const end = (index: number, how: 'release' | 'abort') =>
    command(
      `${how}(#${index})`,
      (model, real) => {
        const i = index % model.leases.length;
        modelRelease(model, i);
        if (how === 'release') real.leases[i]!.lease();
        else real.leases[i]!.controller.abort();
      },
      (model) => model.leases.length > 0,
    );

  const advance = (ms: number) =>
    command(`advance(${ms})`, (model, real) => {
      const end = model.now + ms;
      const due = [...model.instances].filter(([, i]) => i.state === 'lingering' && i.deadline <= end);
      due.sort((a, b) => a[1].deadline - b[1].deadline || a[1].lingerSeq - b[1].lingerSeq);
      for (const [k, instance] of due) {
        model.instances.delete(k);
        model.closed.push({ user: k, views: instance.views });
      }
      model.now = end;
      real.timers.advance(ms);
    });

  it('matches the model over random command sequences', () => {
    const commands = [
      fc.constantFrom(...KEYS).map(acquire),
      fc.nat(20).map((i) => end(i, 'release')),
      fc.nat(20).map((i) => end(i, 'abort')),
      fc.integer({ min: 1, max: LINGER * 2 }).map(advance),
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
