import { afterAll, vi } from 'vitest';

/**
 * npm test is hermetic (vitest.config.ts, project `fast`): whatever the shell exports, no test of it sees
 * a backend variable, so none can reach a shared server or change what it covers by the machine it runs on.
 * The list is BACKEND_VARIABLES of in-process-app.ts, written out: this file runs before every test file
 * and imports nothing but vitest.
 */
for (const name of ['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL']) delete process.env[name];

/**
 * A worker runs file after file (isolate: false): a file that failed with fake timers installed must not
 * hand them to the next one, whose every wait would then hang.
 */
afterAll(() => {
  vi.useRealTimers();
});
