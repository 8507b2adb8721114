import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../test/support/fake-timers.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { sessionKeyFromVerifiedSubject } from '../domain/session-key.ts';
import { createLogger } from '../observability/logger.ts';
import { SessionScope } from './session-scope.ts';

/** What the orders_sessions gauge reads (rule METRICS-service): instances by state, held apart from lingering. */
describe('session scope counts', () => {
  it('[METRICS-service] a held instance counts as live, a released one as lingering, a closed one not at all', () => {
    const timers = new FakeTimers();
    const scope = new SessionScope({ recentCapacity: 10, logger: createLogger('debug', new LogCapture()), timers, lingerMs: 1_000 });
    const signal = new AbortController().signal;
    const held = scope.acquire({ sessionKey: sessionKeyFromVerifiedSubject('held'), signal });
    scope.acquire({ sessionKey: sessionKeyFromVerifiedSubject('released'), signal })();
    expect(scope.counts()).toEqual({ live: 1, lingering: 1 });
    held();
    expect(scope.counts()).toEqual({ live: 0, lingering: 2 });
    timers.advance(1_000);
    expect(scope.counts()).toEqual({ live: 0, lingering: 0 });
  });
});
