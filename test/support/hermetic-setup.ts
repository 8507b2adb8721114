import * as timers from 'node:timers';
import { afterAll, vi } from 'vitest';

/**
 * npm test is hermetic (vitest.config.ts, project `fast`): whatever the shell exports, no test of it sees
 * a backend variable, so none can reach a shared server or change what it covers by the machine it runs on.
 * The list is BACKEND_VARIABLES of in-process-app.ts, written out: this file runs before every test file
 * and imports nothing but vitest and node:timers.
 */
for (const name of ['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL']) delete process.env[name];

/**
 * A worker runs file after file (isolate: false): a file that failed with fake timers installed must not
 * hand them to the next one, whose every wait would then hang.
 */
afterAll(() => {
  vi.useRealTimers();
});

/**
 * Nor may it hand over a global timer function it replaced: a later file's intervals or timeouts would
 * never fire and its waits would hang until the guard, far from the cause. vitest restores every spy
 * once more after a file has ended, to the function the spy wrapped, so a spy on a fake timer puts the
 * dead fake back after vi.useRealTimers (packages/one-port-grpc/private/http2-limits.test.ts spies on the
 * real ones for that reason). This file fails at once instead, naming what was left.
 */
const replaced = (['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate'] as const).filter(
  (name) => globalThis[name] !== timers[name],
);
if (replaced.length > 0) {
  throw new Error(`an earlier test file of this worker left globalThis.${replaced.join(', ')} replaced (a spy on a fake timer?)`);
}
