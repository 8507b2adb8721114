import { describe, expect, it } from 'vitest';
import { settled } from '../../test/support/eventually.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { createLogger } from '../observability/logger.ts';
import { stdlibTransport } from '../transports/stdlib/server.ts';
import { startService, type RunningService, type ServiceOptions } from './start-service.ts';

const ENV = { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', JWT_SECRET: 'a-test-signing-secret-of-at-least-32-bytes' };
/** Real backends on a port nothing listens on: the composition succeeds, the database's init fails. */
const UNREACHABLE = {
  ...ENV,
  POSTGRES_DSN: 'postgres://orders:unused@127.0.0.1:1/orders',
  REDIS_ADDR: '127.0.0.1:1',
  NATS_URL: 'nats://127.0.0.1:1',
};

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

describe('startService (spec 3.4)', () => {
  it('[LIFE-4-shutdown] aborting the signal it was given stops the service, as SIGTERM does through runMain', async () => {
    const controller = new AbortController();
    const service = await start({ signal: controller.signal });
    try {
      await service.ready;
      controller.abort();
      // Nothing else stops it until the finally below: only the abort can.
      await settled(service.done, 'the stop the abort started');
    } finally {
      await service.stop();
    }
  });

  it('[LIFE-4-shutdown] a signal already aborted when the service starts stops it at once', async () => {
    const service = await start({ signal: AbortSignal.abort() });
    try {
      await settled(service.done, 'the stop of the aborted signal');
    } finally {
      await service.stop();
    }
  });

  it('[SIM-embedded-only] without --embedded: no embedded ring; a backend that cannot be reached fails the run, not the composition', async () => {
    const service = await start({ embedded: false, env: UNREACHABLE });
    try {
      expect(service.embedded).toBeUndefined();
      await expect(service.done).rejects.toThrow(/^database: /);
      await expect(service.ready).rejects.toThrow(/^database: /);
    } finally {
      await service.stop();
    }
  });

  it('[LIFE-2-init-connect] a start-up that fails with nobody awaiting `ready` leaves no rejection unobserved (Node would end the process for one)', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const service = await start({ embedded: false, env: UNREACHABLE });
      await expect(service.done).rejects.toThrow(/^database: /);
      // Node reports an unobserved rejection once the microtasks have run: a few turns of the event loop.
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    } finally {
      process.off('unhandledRejection', record);
    }
    expect(unhandled).toEqual([]);
  });
});
