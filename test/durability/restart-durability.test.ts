import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_DEFAULTS } from '../../src/adapters/postgres/config.ts';
import { PostgresCredentialStore } from '../../src/adapters/postgres/credential-store.ts';
import { PostgresDatabase } from '../../src/adapters/postgres/database.ts';
import { DEFAULT_KEY_PREFIX } from '../../src/adapters/redis/connection.ts';
import { ORDER_PLACED_SUBJECT, type OrderPlaced } from '../../src/domain/order-placed.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { hashPassword } from '../../src/service/password-hasher.ts';
import { freePort } from '../support/ports.ts';
import type { Driver, Reply } from '../../conformance/drivers/driver.ts';
import { createDriver } from '../../conformance/drivers/drivers.ts';
import { spawnBin, type SpawnedBin } from '../support/spawn-bin.ts';
import { until } from '../support/eventually.ts';
import { dropSchemaRun, expectNoSecrets } from '../support/replica-kit.ts';

/**
 * The must-show of the real-backends issue, against the shared servers: what a create stores outlives
 * the process, and every create puts an order-placed event on the broker. The real executable is run
 * twice on one schema (POSTGRES_SCHEMA), so it uses the production cache key prefix and the subject
 * orders.placed.<schema>; the test removes its cache keys, stream and schema at the end.
 */
const env = process.env;
const configured = Boolean(env['POSTGRES_DSN'] && env['REDIS_ADDR'] && env['NATS_URL']);
const ORDERS = 20;

interface OrderJson {
  readonly id: string;
  readonly item: string;
  readonly quantity: number;
  readonly status: string;
  readonly created_at: string;
}

describe.skipIf(!configured)('durability across a restart of orders-stdlib (shared Postgres, Redis, NATS)', () => {
  const dsn = env['POSTGRES_DSN']!;
  const schema = `dur_${randomBytes(6).toString('hex')}`;
  const jwtSecret = randomBytes(32).toString('base64url');
  const username = `durable-${randomUUID()}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const userId = randomUUID();
  const events: OrderPlaced[] = [];
  const created: Reply[] = [];
  const tokens: string[] = [];
  const lines: string[] = [];
  let nats: NatsConnection;
  let run: SpawnedBin | undefined;
  let client: Driver;
  let adminUrl: string;
  /** Every answer but the logins' (they carry the token by design), for the secret scan. */
  const bodies: string[] = [];
  let serviceEnv: Record<string, string>;

  async function startService(): Promise<SpawnedBin> {
    const service = spawnBin('bin/orders-stdlib.ts', [], serviceEnv);
    run = service;
    await service.waitReady(adminUrl);
    return service;
  }

  /** Logs in through the service; the Authorization value. */
  async function login(): Promise<string> {
    const reply = await client.login({ username, password });
    expect(reply.status, reply.text).toBe(200);
    tokens.push((reply.body as { token: string }).token);
    return `Bearer ${tokens.at(-1)!}`;
  }

  /** A reply, its text kept for the secret scan. */
  function kept(reply: Reply): Reply {
    bodies.push(reply.text ?? '');
    return reply;
  }

  async function stopService(service: SpawnedBin): Promise<void> {
    const code = await service.stop();
    lines.push(...service.rawLines());
    expect(code, service.rawLines().join('\n')).toBe(0);
    run = undefined;
  }

  beforeAll(async () => {
    // The user, written the way the operator CLI does: straight into the credential store.
    const database = new PostgresDatabase({ ...POSTGRES_DEFAULTS, dsn, schema }, createLogger('error'));
    await database.init();
    await new PostgresCredentialStore(database).add({
      id: userId,
      username,
      passwordHash: await hashPassword(password, { N: 1024, r: 8, p: 1 }),
    });
    await database.stop();

    nats = await connect({ servers: env['NATS_URL']!.split(',') });
    // POSTGRES_SCHEMA gives the executable a subject of its own (one outbox, one stream: real-backends.ts).
    nats.subscribe(`${ORDER_PLACED_SUBJECT}.${schema}`, {
      callback: (error, msg) => {
        if (error !== null) return;
        const event = JSON.parse(msg.string()) as OrderPlaced;
        // Other suites' executables publish on the same production subject.
        if (event.user_id === userId) events.push(event);
      },
    });
    await nats.flush();

    const [httpPort, adminPort] = [await freePort(), await freePort()];
    adminUrl = `http://127.0.0.1:${adminPort}`;
    client = createDriver('rest-http1', { baseUrl: `http://127.0.0.1:${httpPort}`, adminUrl, hooks: undefined });
    serviceEnv = {
      POSTGRES_DSN: dsn,
      POSTGRES_SCHEMA: schema,
      REDIS_ADDR: env['REDIS_ADDR']!,
      NATS_URL: env['NATS_URL']!,
      JWT_SECRET: jwtSecret,
      HTTP_ADDR: `127.0.0.1:${httpPort}`,
      ADMIN_ADDR: `127.0.0.1:${adminPort}`,
      RATE_LIMIT_RPS: '100000',
      LOG_LEVEL: 'debug',
    };
  });

  afterAll(async () => {
    if (run !== undefined) {
      lines.push(...run.rawLines());
      run.kill();
    }
    await client?.close();
    await nats?.close();
    await dropSchemaRun({ dsn, redisAddr: env['REDIS_ADDR']!, natsUrl: env['NATS_URL']! }, schema);
  });

  it(`run 1: ${ORDERS} creates, ${ORDERS} order-placed events with matching fields`, async () => {
    const service = await startService();
    const auth = await login();
    for (let i = 0; i < ORDERS; i++) {
      const reply = kept(await client.createOrder(auth, { item: `durable-item-${i}`, quantity: i + 1 }));
      expect(reply.status, reply.text).toBe(201);
      created.push(reply);
    }
    await until(() => events.length >= ORDERS, `${ORDERS} events (got ${events.length})`);
    await sleep(200); // a duplicate would arrive now
    expect(events).toHaveLength(ORDERS);
    const byId = new Map(events.map((e) => [e.order_id, e]));
    for (const reply of created) {
      const order = reply.body as OrderJson;
      expect(byId.get(order.id)).toEqual({
        order_id: order.id,
        user_id: userId,
        item: order.item,
        quantity: order.quantity,
        created_at: order.created_at,
      });
    }
    await stopService(service);
  });

  it('run 2 on the same schema: every order fetched from Postgres is 200 with identical JSON', async () => {
    // Drop the cached copies, so run 2 can only answer from the database.
    const redis = new Redis(`redis://${env['REDIS_ADDR']}`, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const removed = await redis.del(...created.map((reply) => `${DEFAULT_KEY_PREFIX}${(reply.body as OrderJson).id}`));
    redis.disconnect();
    expect(removed, 'run 1 cached every order under the production prefix').toBe(ORDERS);

    const service = await startService();
    // The same JWT_SECRET: a token issued by run 1 is still accepted.
    const oldAuth = `Bearer ${tokens[0]!}`;
    for (const reply of created) {
      const fetched = kept(await client.getOrder(oldAuth, (reply.body as OrderJson).id));
      expect(fetched.status, fetched.text).toBe(200);
      expect(fetched.text).toBe(reply.text);
    }
    const list = kept(await client.listOrders(oldAuth, { limit: 100 }));
    expect(list.status).toBe(200);
    const listed = (list.body as { orders: OrderJson[] }).orders;
    expect(listed).toHaveLength(ORDERS);
    expect([...listed].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      created.map((reply) => reply.body as OrderJson).sort((a, b) => a.id.localeCompare(b.id)),
    );

    // Run 2 publishes on the same subject.
    const more = kept(await client.createOrder(await login(), { item: 'after-restart', quantity: 7 }));
    expect(more.status).toBe(201);
    created.push(more);
    const id = (more.body as OrderJson).id;
    await until(() => events.some((e) => e.order_id === id), 'the event of run 2');
    expect(events).toHaveLength(ORDERS + 1);
    await stopService(service);
  });

  it('leaks no secret in any log line or body', () => {
    expect(lines.length).toBeGreaterThan(0);
    const secrets: Record<string, string> = { JWT_SECRET: jwtSecret, password };
    tokens.forEach((token, i) => (secrets[`token ${i + 1}`] = token));
    const dsnPassword = new URL(dsn).password;
    if (dsnPassword !== '') secrets['DSN password'] = decodeURIComponent(dsnPassword);
    expectNoSecrets([...lines, ...bodies], secrets);
  });
});
