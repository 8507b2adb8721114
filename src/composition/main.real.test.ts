// runMain without --embedded in this process, on the real servers (POSTGRES_DSN, REDIS_ADDR, NATS_URL): the
// one path of runMain that main.test.ts cannot reach on the fakes. Its own POSTGRES_SCHEMA (which also names
// the stream and subject), removed at the end; nothing else is written (no order is placed).
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { until } from '../../test/support/eventually.ts';
import { realBackendsConfigured } from '../../test/support/in-process-app.ts';
import { natsConfigFromEnv } from '../adapters/nats/config.ts';
import type { Env } from '../config/env.ts';
import type { SignalSource } from '../lifecycle/stop-signals.ts';
import { stdlibTransport } from '../transports/stdlib/server.ts';
import { runMain } from './main.ts';

describe.skipIf(!realBackendsConfigured())('runMain on the real backends', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const env: Env = {
    POSTGRES_DSN: process.env['POSTGRES_DSN'],
    REDIS_ADDR: process.env['REDIS_ADDR'],
    NATS_URL: process.env['NATS_URL'],
    POSTGRES_SCHEMA: schema,
    HTTP_ADDR: '127.0.0.1:0',
    ADMIN_ADDR: '127.0.0.1:0',
    JWT_SECRET: 'main-real-test-secret-0123456789abcdef0123',
    LOG_LEVEL: 'info',
  };

  afterAll(async () => {
    const sql = new pg.Client({ connectionString: env['POSTGRES_DSN'] });
    await sql.connect();
    await sql.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
    const nc = await connect({ servers: [...natsConfigFromEnv(env).servers] });
    await (await jetstreamManager(nc)).streams.delete(`ORDERS_${schema}`).catch(() => undefined);
    await nc.close();
  });

  it('[LIFE-4-shutdown] without --embedded: the bound ports are logged and no embedded banner (nothing left rejected unobserved); SIGTERM stops it, exit 0', async () => {
    const msgs: string[] = [];
    const signals = new EventEmitter();
    const unhandled: unknown[] = [];
    const record = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const code = runMain({
        serviceName: 'orders-main-real-test',
        transport: stdlibTransport,
        argv: [],
        env,
        io: {
          stdout: () => ({ write: (line: string) => void msgs.push(String((JSON.parse(line) as { msg: unknown }).msg)) }),
          stderr: { write: () => true },
          signals: signals as unknown as SignalSource,
          exit: vi.fn(),
        },
      });
      await until(() => msgs.includes('api: listening') || msgs.some((m) => m.startsWith('start-up failed')), 'start-up');
      expect(msgs).toContain('admin: listening');
      // The banner's callback has run (the ports were logged from it); a few turns for Node to report a rejection.
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 0));
      signals.emit('SIGTERM', 'SIGTERM');
      expect(await code).toBe(0);
      expect(msgs.filter((m) => m.startsWith('embedded mode'))).toEqual([]);
      expect(msgs.at(-1)).toBe('stopped');
    } finally {
      process.off('unhandledRejection', record);
    }
    expect(unhandled).toEqual([]);
  });
});
