import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stdlibTransport } from '../../src/transports/stdlib/stdlib-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { findBinary, startRedisServer, type LocalServer } from './local-servers.ts';
import { expectNoSecrets, expectOnlyFailing, ServiceClient, trafficDuring } from './service-client.ts';

/**
 * Spec 2.3 / 4.2 and the cache-aside rule: the whole service on real backends, with a private
 * redis-server that is killed and restarted while the shared Postgres and NATS stay up.
 */
const shared = Boolean(process.env['POSTGRES_DSN'] && process.env['NATS_URL']);

describe.skipIf(!shared || findBinary('redis-server') === undefined)('whole service through a Redis outage (own redis-server)', () => {
  let redis: LocalServer;
  let app: InProcessApp;
  let client: ServiceClient;
  let password: string;
  let token: string;

  beforeAll(async () => {
    redis = await startRedisServer();
    app = await startInProcess({ transport: stdlibTransport, backend: 'real', env: { REDIS_ADDR: `127.0.0.1:${redis.port}` } });
    client = new ServiceClient(app.baseUrl, app.adminUrl);
    const username = `redis-fault-${randomUUID()}`;
    password = await app.addUser(username);
    token = await client.login(username, password);
  });

  afterAll(async () => {
    await app?.stop();
    await redis?.stop();
  });

  it('is clean before the outage', async () => {
    const { status, report } = await client.healthz();
    expect(status).toBe(200);
    expect(report.clean).toBe(true);
  });

  it('Redis killed: reads come from Postgres, /healthz names the cache; a restart makes it clean again', async () => {
    const created = await client.createOrder(token, 'before-outage', 2);
    expect(created.status).toBe(201);
    const id = (created.json as { id: string }).id;

    // In-flight traffic while the server dies: every GET and POST must still succeed.
    const statuses = await trafficDuring(
      4,
      async (i) => (i % 2 === 0 ? client.call('GET', `/orders/${id}`, { token }) : client.createOrder(token, `during-kill-${i}`)).then((r) => r.status),
      sleep(150).then(() => redis.kill()).then(() => sleep(200)),
    );
    expect(statuses.length).toBeGreaterThan(4);
    expect(statuses.filter((s) => s !== 200 && s !== 201)).toEqual([]);
    console.log(`redis kill: ${statuses.length} requests in flight around the kill, all answered 200/201`);

    const report = await client.untilNodeFails('cache', 3_000);
    const error = expectOnlyFailing(report, 'cache');
    expect(error).toMatch(/^cache: /);
    console.log(`redis down: /healthz cache error "${error}"`);

    // Stay down over several reconnect attempts, serving all the while.
    const downUntil = performance.now() + 1_200;
    let duringOutage = '';
    while (performance.now() < downUntil) {
      const fetched = await client.call('GET', `/orders/${id}`, { token });
      expect(fetched.status, fetched.text).toBe(200);
      expect(fetched.text).toBe(created.text);
      const another = await client.createOrder(token, 'during-outage');
      expect(another.status, another.text).toBe(201);
      duringOutage = (another.json as { id: string }).id;
      expect((await client.healthz()).status).toBe(503);
      await sleep(100);
    }
    // Never cached (the write failed): only Postgres can have answered this one.
    const uncached = await client.call('GET', `/orders/${duringOutage}`, { token });
    expect(uncached.status, uncached.text).toBe(200);
    const list = await client.call('GET', '/orders?limit=100', { token });
    expect(list.status).toBe(200);
    expect((list.json as { orders: Array<{ id: string }> }).orders.map((o) => o.id)).toContain(duringOutage);
    expect(app.logs.find('order service: cache write failed').length).toBeGreaterThan(0);

    const restarting = performance.now();
    await redis.start();
    const startMs = performance.now() - restarting;
    const ms = await client.msUntilClean(10_000);
    console.log(`redis back → healthz clean in ${ms.toFixed(0)} ms (server start until the port accepted: ${startMs.toFixed(0)} ms)`);
    expect(ms).toBeLessThan(5_000);
    expect(app.logs.find('cache: connection restored').length).toBeGreaterThan(0);

    const after = await client.call('GET', `/orders/${id}`, { token });
    expect(after.status).toBe(200);
    expect(after.text).toBe(created.text);
    expect((await client.createOrder(token, 'after-outage')).status).toBe(201);
  });

  it('leaks no secret in any log line or body', () => {
    expectNoSecrets([...app.logs.raw, ...client.bodies], { JWT_SECRET: app.jwtSecret, token, password });
  });
});
