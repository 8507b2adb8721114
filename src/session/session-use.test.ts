import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../test/support/fake-timers.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { sessionKeyFromVerifiedSubject } from '../domain/session-key.ts';
import { createLogger } from '../observability/logger.ts';
import { ErrNoDoneSignal, ErrNoScopeKey, ErrScopeFull } from './session-errors.ts';
import { SESSION_LINGER_MS, SessionScope } from './session-scope.ts';

/** `use` is acquire + work + release in one synchronous call: the same checks and transitions. */
describe('SessionScope.use', () => {
  const alice = sessionKeyFromVerifiedSubject('alice');
  const signal = new AbortController().signal;

  function setup() {
    const timers = new FakeTimers();
    const logs = new LogCapture();
    return { timers, logs, scope: new SessionScope({ recentCapacity: 3, logger: createLogger('debug', logs), timers, cap: 1 }) };
  }

  it('[SESSION-linger-reacquire] runs the work on the key’s instance, then lingers it, and a later use finds the views', () => {
    const { scope, timers } = setup();
    scope.use({ sessionKey: alice, signal }, (session) => session.recordView('o1'));
    expect(scope.stateOf(alice)).toBe('lingering');
    expect([...timers.pending.values()].map((t) => t.ms)).toEqual([SESSION_LINGER_MS]);
    expect(scope.use({ sessionKey: alice, signal }, (session) => session.recent())).toEqual(['o1']);
  });

  it('releases when the work throws, and refuses a missing key, a missing done signal and a full scope', () => {
    const { scope } = setup();
    expect(() => scope.use({ sessionKey: alice, signal }, () => { throw new Error('boom'); })).toThrow('boom');
    expect(scope.stateOf(alice)).toBe('lingering');
    expect(() => scope.use({ signal }, () => 1)).toThrow(ErrNoScopeKey);
    expect(() => scope.use({ sessionKey: alice }, () => 1)).toThrow(ErrNoDoneSignal);
    expect(() => scope.use({ sessionKey: sessionKeyFromVerifiedSubject('bob'), signal }, () => 1)).toThrow(ErrScopeFull);
  });
});
