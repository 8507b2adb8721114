// The embedded ring as composition loads it: startService with --embedded (the ring loaded by its one dynamic
// import, or the one runMain tees stdout into), its demo logins, and what it adds to the admin listener.
import { describe, expect, it } from 'vitest';
import { LogCapture } from '../test/support/log-capture.ts';
import { createLogger } from '../src/observability/logger.ts';
import { startService, type ServiceOptions } from '../src/composition/start-service.ts';
import { stdlibTransport } from '../src/transports/stdlib/server.ts';
import { DEMO_USERS, type EmbeddedBackends } from './backends.ts';
import { createRing } from './index.ts';

const ENV = { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', JWT_SECRET: 'a-test-signing-secret-of-at-least-32-bytes' };

async function start(options: Partial<ServiceOptions> = {}) {
  const logs = new LogCapture();
  const service = await startService({
    serviceName: 'orders-test',
    transport: stdlibTransport,
    env: ENV,
    logger: createLogger('debug', logs),
    embedded: true,
    ...options,
  });
  const ports = await service.ready;
  return { service, logs, admin: `http://127.0.0.1:${ports.admin}` };
}

describe('the embedded ring (spec 3.5)', () => {
  it('[AUTH-10-credentials] with the demo users seeded each demo login signs in and is announced; without, none does', async () => {
    const seeded = await start({ seedDemoUsers: true });
    const bare = await start();
    try {
      expect((seeded.service.embedded?.backends as EmbeddedBackends).demoUsers).toEqual(DEMO_USERS);
      for (const user of DEMO_USERS)
        await expect(seeded.service.app.core.auth.login(user.username, user.password)).resolves.toMatch(/^eyJ/);
      await expect(bare.service.app.core.auth.login(DEMO_USERS[0].username, DEMO_USERS[0].password)).rejects.toThrow();
      expect(seeded.service.embedded?.announce()).toEqual(['alice / alice-password', 'bob / bob-password']);
      expect(seeded.logs.find(`embedded mode: in-memory backends; demo logins alice / alice-password, bob / bob-password`)).toEqual([
        expect.objectContaining({ level: 'info', users: ['alice', 'bob'] }),
      ]);
    } finally {
      await Promise.all([seeded.service.stop(), bare.service.stop()]);
    }
  });

  it('[SIM-embedded-only, CONSOLE-page] the admin listener has the simulator and the console; the service runs on its simulated time', async () => {
    const { service, admin } = await start();
    try {
      expect((await fetch(`${admin}/console/`)).status).toBe(200);
      const before = Date.now();
      const advanced = await fetch(`${admin}/simulator/clock/advance`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"ms":3600000}',
      });
      expect(advanced.status).toBe(200);
      // The clock and timers the ring hands composition are the time the simulator moved: an hour ahead of the
      // real time read before the advance, however long the advance took to answer.
      expect(service.embedded?.clock.now().getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
      expect(service.embedded?.timers).toBe(service.embedded?.clock);
    } finally {
      await service.stop();
    }
  });

  it('[CONSOLE-feed] the log tail holds what went through the stdout it tees; a ring never teed has none', async () => {
    const written: string[] = [];
    const ring = createRing();
    const logger = createLogger('info', ring.tee({ write: (line: string) => void written.push(line) }));
    const teed = await start({ embedded: ring, logger });
    const bare = await start();
    try {
      logger.info('a line for the tail');
      const state = (await (await fetch(`${teed.admin}/console/state`)).json()) as { log: { lines: { text: string }[] } | null };
      const lines = state.log?.lines.map((line) => `${line.text}\n`) ?? [];
      expect(lines.some((line) => line.includes('a line for the tail'))).toBe(true);
      expect(written.slice(0, lines.length)).toEqual(lines);
      expect(((await (await fetch(`${bare.admin}/console/state`)).json()) as { log: unknown }).log).toBeNull();
    } finally {
      await Promise.all([teed.service.stop(), bare.service.stop()]);
    }
  });
});
