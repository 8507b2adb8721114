import { describe, expect, it } from 'vitest';
import { LogCapture } from '../../test/support/log-capture.ts';
import { createLogger } from '../observability/logger.ts';
import { stdlibTransport } from '../transports/stdlib/stdlib-transport.ts';
import { DEMO_USERS } from './embedded-backends.ts';
import { startService, type RunningService, type ServiceOptions } from './start-service.ts';

const ENV = { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', JWT_SECRET: 'a-test-signing-secret-of-at-least-32-bytes' };

function start(options: Partial<ServiceOptions> = {}): Promise<RunningService> {
  return startService({
    serviceName: 'orders-test',
    transport: stdlibTransport,
    env: ENV,
    logger: createLogger('debug', new LogCapture()),
    embedded: true,
    ...options,
  });
}

/** 'stopped' when `done` settles within a second, 'running' otherwise. */
function settlesSoon(done: Promise<void>): Promise<'stopped' | 'running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'running'>((resolve) => (timer = setTimeout(() => resolve('running'), 1_000)));
  return Promise.race([done.then(() => 'stopped' as const), late]).finally(() => clearTimeout(timer));
}

describe('startService (spec 3.4)', () => {
  it('[LIFE-4-shutdown] aborting the signal it was given stops the service, as SIGTERM does through runMain', async () => {
    const controller = new AbortController();
    const service = await start({ signal: controller.signal });
    try {
      await service.ready;
      controller.abort();
      expect(await settlesSoon(service.done)).toBe('stopped');
    } finally {
      await service.stop();
    }
  });

  it('[LIFE-4-shutdown] a signal already aborted when the service starts stops it at once', async () => {
    const service = await start({ signal: AbortSignal.abort() });
    try {
      expect(await settlesSoon(service.done)).toBe('stopped');
    } finally {
      await service.stop();
    }
  });

  it('[AUTH-10-credentials] embedded with the demo users seeded, each demo login signs in; without, none does', async () => {
    const seeded = await start({ seedDemoUsers: true });
    const bare = await start();
    try {
      expect(seeded.fakes?.demoUsers).toEqual(DEMO_USERS);
      for (const user of DEMO_USERS) await expect(seeded.app.core.auth.login(user.username, user.password)).resolves.toMatch(/^eyJ/);
      await expect(bare.app.core.auth.login(DEMO_USERS[0].username, DEMO_USERS[0].password)).rejects.toThrow();
    } finally {
      await Promise.all([seeded.stop(), bare.stop()]);
    }
  });
});
