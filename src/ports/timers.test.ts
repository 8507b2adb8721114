// The Node timers behind the Timers port: what the session linger, the outbox relay and the memory bus wait on by default.
import { describe, expect, it } from 'vitest';
import { HANG_GUARD_MS, settled, until } from '../../test/support/eventually.ts';
import { systemTimers } from './timers.ts';

describe('systemTimers', () => {
  it('[SESSION-linger-close] setTimeout fires once on Node time without holding the process open; clearTimeout cancels', async () => {
    const fired: string[] = [];
    const handle = systemTimers.setTimeout(() => fired.push('kept'), 1);
    systemTimers.clearTimeout(systemTimers.setTimeout(() => fired.push('cleared'), 1));
    expect((handle as NodeJS.Timeout).hasRef()).toBe(false);
    await until(() => fired.length > 0, 'the kept timer');
    await new Promise((resolve) => setTimeout(resolve, 20)); // the cleared one was due as early
    expect(fired).toEqual(['kept']);
  });

  it('[EVT-7-delivery] sleep resolves after its time, and at once without rejecting when its signal aborts, before or during', async () => {
    await expect(systemTimers.sleep(1)).resolves.toBeUndefined();
    // Sleeps far longer than the test waits for anything: only the abort can end them.
    await expect(systemTimers.sleep(10 * HANG_GUARD_MS, AbortSignal.abort())).resolves.toBeUndefined();
    const controller = new AbortController();
    const sleeping = systemTimers.sleep(10 * HANG_GUARD_MS, controller.signal);
    controller.abort();
    await settled(sleeping, 'the sleep ended by its abort');
    await expect(sleeping).resolves.toBeUndefined();
  });

  it('[EVT-7-delivery] nowMs is the monotonic performance clock, not the wall clock', () => {
    const before = performance.now();
    const now = systemTimers.nowMs();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(performance.now());
  });
});
