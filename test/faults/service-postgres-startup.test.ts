import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.ts';
import { expectNoSecrets } from './service-client.ts';
import { portAccepts } from '../support/ports.ts';
import { spawnBin } from '../support/spawn-bin.ts';

/**
 * Spec 3.4 rules 2-3: the relational database connects once during start-up, with no retry; a failure
 * aborts start-up before any listener is served. Needs no server at all: the DSN points at a closed port.
 */
describe('orders-stdlib with Postgres unreachable at start-up', () => {
  it('exits non-zero without ever binding a port, naming POSTGRES_DSN and not the password', async () => {
    const closedPort = await freePort();
    const httpPort = await freePort();
    const adminPort = await freePort();
    const dsnPassword = `pw-${randomBytes(9).toString('hex')}`;
    const jwtSecret = randomBytes(32).toString('base64url');
    const service = spawnBin('bin/orders-stdlib.ts', [], {
      POSTGRES_DSN: `postgres://orders:${dsnPassword}@127.0.0.1:${closedPort}/orders`,
      REDIS_ADDR: process.env['REDIS_ADDR'] ?? '127.0.0.1:6379',
      NATS_URL: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
      JWT_SECRET: jwtSecret,
      HTTP_ADDR: `127.0.0.1:${httpPort}`,
      ADMIN_ADDR: `127.0.0.1:${adminPort}`,
      LOG_LEVEL: 'debug',
    });

    // Probe both ports for the whole life of the process: not one connection may be accepted.
    let exited = false;
    void service.exited.then(() => (exited = true));
    const accepted: string[] = [];
    let probes = 0;
    while (!exited) {
      const [http, admin] = await Promise.all([portAccepts(httpPort).then((a) => !a), portAccepts(adminPort).then((a) => !a)]);
      probes++;
      if (!http) accepted.push(`HTTP_ADDR after ${probes} probes`);
      if (!admin) accepted.push(`ADMIN_ADDR after ${probes} probes`);
      await sleep(5);
    }
    const { code } = await service.exited;
    expect(accepted).toEqual([]);
    expect(probes).toBeGreaterThan(0);
    expect(await portAccepts(httpPort)).toBe(false);
    expect(await portAccepts(adminPort)).toBe(false);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();

    const output = service.rawLines().join('\n');
    const failure = service.lines.find((line) => line['msg'] === 'start-up failed');
    expect(failure, output).toBeDefined();
    expect(String(failure?.['err'])).toContain('POSTGRES_DSN');
    expect(String(failure?.['err'])).toContain(`127.0.0.1:${closedPort}/orders`);
    expect(output).not.toContain('api: listening');
    expectNoSecrets(service.rawLines(), { 'DSN password': dsnPassword, JWT_SECRET: jwtSecret });
  });
});
