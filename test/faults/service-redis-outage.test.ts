import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { findBinary, startRedisServer } from './local-servers.ts';
import { expectNoSecrets, expectOnlyFailing, faultFixture, trafficDuring } from './service-client.ts';

/**
 * Spec 2.3 / 4.2 and the cache-aside rule: the whole service on real backends, with a private
 * redis-server that is killed and restarted while the shared Postgres and NATS stay up.
 */
const shared = Boolean(process.env['POSTGRES_DSN'] && process.env['NATS_URL']);

describe.skipIf(!shared || findBinary('redis-server') === undefined)('whole service through a Redis outage (own redis-server)', () => {
  const f = faultFixture('redis-fault', startRedisServer, (server) => ({ REDIS_ADDR: `127.0.0.1:${server.port}` }));



  it('is clean before the outage', async () => {
    const { status, report } = await f.client.healthz();
    expect(status).toBe(200);
    expect(report.clean).toBe(true);
  });

  it('Redis killed: reads come from Postgres, /healthz names the cache; a restart makes it clean again', async () => {
    const created = await f.client.createOrder(f.token, 'before-outage', 2);
    expect(created.status).toBe(201);
    const id = (created.json as { id: string }).id;

    // In-flight traffic while the server dies: every GET and POST must still succeed.
    const statuses = await trafficDuring(
      4,
      async (i) => (i % 2 === 0 ? f.client.call('GET', `/orders/${id}`, { token: f.token }) : f.client.createOrder(f.token, `during-kill-${i}`)).then((r) => r.status),
      sleep(150).then(() => f.server.kill()).then(() => sleep(200)),
    );
    expect(statuses.length).toBeGreaterThan(4);
    expect(statuses.filter((s) => s !== 200 && s !== 201)).toEqual([]);
    console.log(`redis kill: ${statuses.length} requests in flight around the kill, all answered 200/201`);

    const report = await f.client.untilNodeFails('cache', 3_000);
    const error = expectOnlyFailing(report, 'cache');
    expect(error).toMatch(/^cache: /);
    console.log(`redis down: /healthz cache error "${error}"`);

    // Stay down over several reconnect attempts, serving all the while.
    const downUntil = performance.now() + 1_200;
    let duringOutage = '';
    while (performance.now() < downUntil) {
      const fetched = await f.client.call('GET', `/orders/${id}`, { token: f.token });
      expect(fetched.status, fetched.text).toBe(200);
      expect(fetched.text).toBe(created.text);
      const another = await f.client.createOrder(f.token, 'during-outage');
      expect(another.status, another.text).toBe(201);
      duringOutage = (another.json as { id: string }).id;
      expect((await f.client.healthz()).status).toBe(503);
      await sleep(100);
    }
    // Never cached (the write failed): only Postgres can have answered this one.
    const uncached = await f.client.call('GET', `/orders/${duringOutage}`, { token: f.token });
    expect(uncached.status, uncached.text).toBe(200);
    const list = await f.client.call('GET', '/orders?limit=100', { token: f.token });
    expect(list.status).toBe(200);
    expect((list.json as { orders: Array<{ id: string }> }).orders.map((o) => o.id)).toContain(duringOutage);
    expect(f.app.logs.find('order service: cache write failed').length).toBeGreaterThan(0);

    const restarting = performance.now();
    await f.server.start();
    const startMs = performance.now() - restarting;
    const ms = await f.client.msUntilClean(10_000);
    console.log(`redis back → healthz clean in ${ms.toFixed(0)} ms (server start until the port accepted: ${startMs.toFixed(0)} ms)`);
    expect(f.app.logs.find('cache: connection restored').length).toBeGreaterThan(0);

    const after = await f.client.call('GET', `/orders/${id}`, { token: f.token });
    expect(after.status).toBe(200);
    expect(after.text).toBe(created.text);
    expect((await f.client.createOrder(f.token, 'after-outage')).status).toBe(201);
  });

  it('leaks no secret in any log line or body', () => {
    expectNoSecrets([...f.app.logs.raw, ...f.client.bodies], { JWT_SECRET: f.app.jwtSecret, token: f.token, password: f.password });
  });
});
