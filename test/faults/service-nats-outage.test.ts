import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { findBinary, startNatsServer } from './local-servers.ts';
import { expectNoSecrets, expectOnlyFailing, faultFixture, trafficDuring } from './service-client.ts';
import { until } from '../support/eventually.ts';

/**
 * Spec 6 rules 1-3 and 2.3 with issue 13's outbox: a broker outage never fails a create; the relay logs
 * the failed publish and retries, /healthz names the publisher, and every event arrives once it is back.
 */
const shared = Boolean(process.env['POSTGRES_DSN'] && process.env['REDIS_ADDR']);

describe.skipIf(!shared || findBinary('nats-server') === undefined)('whole service through a NATS outage (own nats-server)', () => {
  const f = faultFixture('nats-fault', startNatsServer, (server) => ({ NATS_URL: `nats://127.0.0.1:${server.port}` }));

  const notified = (orderId: string): boolean => f.app.logs.find('order placed').some((line) => line['order_id'] === orderId);

  it('delivers to the notifier before the outage', async () => {
    const created = await f.client.createOrder(f.token, 'before-outage');
    expect(created.status).toBe(201);
    await until(() => notified((created.json as { id: string }).id), 'the notifier line');
    expect((await f.client.healthz()).status).toBe(200);
  });

  it('NATS stopped: creates still 201, the relay logs the failure and retries, /healthz names the publisher; after a restart every order is announced once', async () => {
    // In-flight creates around the kill: none may fail.
    const ids: string[] = [];
    const statuses = await trafficDuring(
      3,
      async (i) => {
        const reply = await f.client.createOrder(f.token, `during-kill-${i}`);
        if (reply.status === 201) ids.push((reply.json as { id: string }).id);
        return reply.status;
      },
      sleep(150).then(() => f.server.kill()).then(() => sleep(200)),
    );
    expect(statuses.filter((s) => s !== 201)).toEqual([]);

    const report = await f.client.untilNodeFails('publisher', 10_000);
    const error = expectOnlyFailing(report, 'publisher');
    expect(error).toMatch(/^publisher: /);
    console.log(`nats down: /healthz publisher error "${error}"`);

    const created = await f.client.createOrder(f.token, 'during-outage', 3);
    expect(created.status, created.text).toBe(201);
    const id = (created.json as { id: string }).id;
    ids.push(id);
    // The order itself is stored: it is served while the broker is still down.
    const fetched = await f.client.call('GET', `/orders/${id}`, { token: f.token });
    expect(fetched.status).toBe(200);
    expect(fetched.text).toBe(created.text);

    // The relay, not the order service, logs the publish failure (spec 6 rule 3, issue 13), and retries.
    await until(() => f.app.logs.find('outbox relay: publish failed').length >= 2, 'two failed relay rounds');
    const failure = f.app.logs.find('outbox relay: publish failed')[0];
    expect(failure?.['level']).toBe('warn');
    expect(String(failure?.['err'])).toMatch(/^publisher: /);
    expect(f.app.logs.find('order service: publish failed')).toEqual([]);

    await f.server.start();
    const ms = await f.client.msUntilClean(15_000);
    console.log(`nats back → healthz clean in ${ms.toFixed(0)} ms`);

    // Nothing created during the outage is lost: each is announced, once.
    await until(() => ids.every(notified), 'every order created around and during the outage to be announced', 30_000);
    await sleep(300);
    for (const orderId of ids) expect(f.app.logs.find('order placed').filter((line) => line['order_id'] === orderId)).toHaveLength(1);
    console.log(`nats kill: ${ids.length} creates around and during the outage, all 201, all announced once after the restart`);

    const after = await f.client.createOrder(f.token, 'after-outage');
    expect(after.status).toBe(201);
    const afterId = (after.json as { id: string }).id;
    await until(() => notified(afterId), 'the notifier line after the restart');
    expect(f.app.logs.find('publisher: connection restored').length).toBeGreaterThan(0);
  });

  it('leaks no secret in any log line or body', () => {
    expectNoSecrets([...f.app.logs.raw, ...f.client.bodies], { JWT_SECRET: f.app.jwtSecret, token: f.token, password: f.password });
  });
});
