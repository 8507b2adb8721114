import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Order } from '../../src/domain/order.ts';
import type { InProcessApp } from '../support/in-process-app.ts';
import { freePort } from '../support/ports.ts';
import { canRunPostgres, startPostgresServer, type PostgresServer } from './postgres-server.ts';
import { expectNoSecrets, expectOnlyFailing, type ServiceClient, startWithUser, type Reply } from './service-client.ts';
import { spawnBin } from '../support/spawn-bin.ts';

/**
 * The relational database going away under a running service (spec 7: anything not a domain error is
 * 500 `internal server error`; spec 2.3: the `database` node). A private initdb'd cluster with password
 * authentication, so the DSN password can be looked for in every captured line.
 */
const shared = Boolean(process.env['REDIS_ADDR'] && process.env['NATS_URL']);
const INTERNAL = JSON.stringify({ error: 'internal server error' });

describe.skipIf(!shared || !canRunPostgres())('whole service through a Postgres outage (own initdb cluster)', () => {
  let server: PostgresServer;
  let app: InProcessApp;
  let client: ServiceClient;
  let password: string;
  let token: string;
  let userId: string;
  let username: string;
  const spawnedLines: string[] = [];

  /** Orders written straight to the repository: never cached, so only Postgres can answer for them. */
  async function uncachedOrder(item: string): Promise<Order> {
    const order: Order = { id: randomUUID(), userId, item, quantity: 1, status: 'pending', createdAt: new Date() };
    await app.backends.repository.insert(order);
    return order;
  }

  /** An admin connection holding ACCESS EXCLUSIVE on the app's orders table, so its queries wait. */
  async function lockOrders(): Promise<pg.Client> {
    const admin = new pg.Client({ connectionString: server.dsn });
    admin.on('error', () => undefined);
    await admin.connect();
    const { rows } = await admin.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 't\\_%'`);
    expect(rows).toHaveLength(1);
    await admin.query('BEGIN');
    await admin.query(`LOCK TABLE "${rows[0]!.nspname}".orders IN ACCESS EXCLUSIVE MODE`);
    return admin;
  }

  async function waitingOnLock(admin: pg.Client, count: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      // Inside the lock's transaction pg_stat_activity is a snapshot taken once; refresh it each time.
      await admin.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'orders' AND wait_event_type = 'Lock'`,
      );
      if (rows[0]!.n >= count) return;
      await sleep(10);
    }
    const { rows } = await admin.query(`SELECT application_name, state, wait_event_type, wait_event, query FROM pg_stat_activity`);
    throw new Error(`fewer than ${count} queries of the app are waiting on the lock: ${JSON.stringify(rows)}`);
  }

  /** In-flight GET (of an uncached order), list and create, blocked on the lock; returns their pending replies. */
  async function blockedRequests(admin: pg.Client, order: Order): Promise<Array<Promise<{ what: string; reply: Reply; ms: number }>>> {
    const started = performance.now();
    const timed = (what: string, request: Promise<Reply>) => request.then((reply) => ({ what, reply, ms: performance.now() - started }));
    const pending = [
      timed('GET /orders/{id}', client.call('GET', `/orders/${order.id}`, { token })),
      timed('GET /orders', client.call('GET', '/orders', { token })),
      timed('POST /orders', client.createOrder(token, 'blocked-create')),
    ];
    await waitingOnLock(admin, 3);
    return pending;
  }

  /**
   * A request in flight when the server goes away either finishes (its query got through first) or is
   * answered 500 `internal server error`; it never hangs and never gets anything else. Returns the create.
   */
  function expectEndedCleanly(how: string, outcomes: Array<{ what: string; reply: Reply; ms: number }>, stopMs: number): Reply | undefined {
    for (const { what, reply, ms } of outcomes) {
      const shown = reply.status === 500 ? reply.text : `${reply.text.slice(0, 40)}…`;
      console.log(`postgres ${how}: in-flight ${what} → ${reply.status} ${shown} after ${ms.toFixed(0)} ms (stop took ${stopMs.toFixed(0)} ms)`);
      expect([500, what === 'POST /orders' ? 201 : 200], what).toContain(reply.status);
      if (reply.status === 500) expect(reply.text, what).toBe(INTERNAL);
    }
    return outcomes.find((o) => o.what === 'POST /orders')?.reply;
  }

  /** Stops the server (`mode`) while a GET of an uncached order, a list and a create wait on a lock; returns the create's reply. */
  async function stopWhileBlocked(mode: 'fast' | 'immediate', item: string): Promise<Reply | undefined> {
    const blocked = await uncachedOrder(item);
    const admin = await lockOrders();
    try {
      const inFlight = await blockedRequests(admin, blocked);
      const stopped = performance.now();
      await server.stop(mode);
      return expectEndedCleanly(`${mode} stop`, await Promise.all(inFlight), performance.now() - stopped);
    } finally {
      await admin.end().catch(() => undefined);
    }
  }

  beforeAll(async () => {
    server = await startPostgresServer();
    ({ app, client, username, password, token } = await startWithUser('pg-fault', { POSTGRES_DSN: server.dsn }));
    userId = (await app.backends.credentials.findByUsername(username))!.id;
  }, 30_000);

  afterAll(async () => {
    // The schema dropper needs the server up.
    if (server !== undefined) await server.start().catch(() => undefined);
    await app?.stop();
    await server?.destroy();
  });

  it('Postgres fast-stopped: requests get 500 internal server error, the process keeps serving /healthz, a restart heals', async () => {
    const cached = await client.createOrder(token, 'cached-before');
    expect(cached.status).toBe(201);
    const cachedId = (cached.json as { id: string }).id;
    const uncached = await uncachedOrder('uncached-before');
    expect((await client.call('GET', `/orders/${uncached.id}`, { token })).status).toBe(200);
    const another = await uncachedOrder('uncached-never-read');

    // In flight: blocked inside Postgres when the server shuts down (fast: sessions terminated, 57P01).
    const blockedCreate = await stopWhileBlocked('fast', 'blocked-read');

    // During the outage: everything that needs the database is a 500, and fast.
    for (const [what, request] of [
      ['GET uncached', () => client.call('GET', `/orders/${another.id}`, { token })],
      ['GET /orders', () => client.call('GET', '/orders', { token })],
      ['POST /orders', () => client.createOrder(token, 'during-outage')],
      ['POST /auth/login', () => client.call('POST', '/auth/login', { body: { username, password }, keep: false })],
    ] as const) {
      const reply = await request();
      expect(reply.status, what).toBe(500);
      expect(reply.text, what).toBe(INTERNAL);
    }
    // A cached order is still served: the read path never touches Postgres on a hit.
    const hit = await client.call('GET', `/orders/${cachedId}`, { token });
    expect(hit.status).toBe(200);
    expect(hit.text).toBe(cached.text);

    const report = await client.untilNodeFails('database', 3_000);
    const error = expectOnlyFailing(report, 'database');
    expect(error).toMatch(/^database: /);
    console.log(`postgres down: /healthz database error "${error}"`);
    // The process survives the outage: it keeps answering for a while.
    await sleep(800);
    const still = await client.healthz();
    expect(still.status).toBe(503);
    expectOnlyFailing(still.report, 'database');

    const restarting = performance.now();
    await server.start();
    const startMs = performance.now() - restarting;
    const ms = await client.msUntilClean(10_000);
    console.log(`postgres back → healthz clean in ${ms.toFixed(0)} ms (server start until SELECT 1 answered: ${startMs.toFixed(0)} ms)`);

    const read = await client.call('GET', `/orders/${another.id}`, { token });
    expect(read.status, read.text).toBe(200);
    expect((read.json as { item: string }).item).toBe('uncached-never-read');
    expect((await client.call('GET', '/orders', { token })).status).toBe(200);
    expect((await client.createOrder(token, 'after-outage')).status).toBe(201);
    // The create that failed during the outage left nothing behind.
    const list = (await client.call('GET', '/orders?limit=100', { token })).json as { orders: Array<{ item: string }> };
    expect(list.orders.map((o) => o.item)).not.toContain('during-outage');
    // An in-flight create answered 500 may still have committed just before its session was terminated.
    const committed = list.orders.some((o) => o.item === 'blocked-create');
    console.log(`postgres fast stop: in-flight create answered ${blockedCreate?.status}, order ${committed ? 'was' : 'was not'} stored`);
    if (blockedCreate?.status === 201) expect(committed).toBe(true);
  });

  it('Postgres crashed (immediate stop): in-flight requests get 500 too, crash recovery, then healthy again', async () => {
    await stopWhileBlocked('immediate', 'blocked-read-2');
    expectOnlyFailing((await client.untilNodeFails('database', 3_000)), 'database');

    const restarting = performance.now();
    await server.start();
    const startMs = performance.now() - restarting;
    const ms = await client.msUntilClean(10_000);
    console.log(`postgres back after a crash → healthz clean in ${ms.toFixed(0)} ms (crash recovery until SELECT 1 answered: ${startMs.toFixed(0)} ms)`);
    expect((await client.createOrder(token, 'after-crash')).status).toBe(201);
  });

  it('orders-stdlib refuses to start with a wrong DSN password, naming POSTGRES_DSN and neither password', async () => {
    const wrong = `wrong-${randomBytes(9).toString('hex')}`;
    const jwtSecret = randomBytes(32).toString('base64url');
    const service = spawnBin('bin/orders-stdlib.ts', [], {
      POSTGRES_DSN: `postgres://${server.user}:${wrong}@127.0.0.1:${server.port}/postgres`,
      REDIS_ADDR: process.env['REDIS_ADDR']!,
      NATS_URL: process.env['NATS_URL']!,
      JWT_SECRET: jwtSecret,
      HTTP_ADDR: `127.0.0.1:${await freePort()}`,
      ADMIN_ADDR: `127.0.0.1:${await freePort()}`,
      LOG_LEVEL: 'debug',
    });
    const { code } = await service.exited;
    spawnedLines.push(...service.rawLines());
    expect(code).toBe(1);
    const failure = service.lines.find((l) => l['msg'] === 'start-up failed');
    expect(String(failure?.['err'])).toMatch(/POSTGRES_DSN.*password authentication failed/);
    expectNoSecrets(service.rawLines(), { 'wrong DSN password': wrong, 'DSN password': server.password, JWT_SECRET: jwtSecret });
  });

  it('leaks no secret in any log line or body', () => {
    expect(app.logs.raw.some((line) => line.includes('database'))).toBe(true);
    expectNoSecrets([...app.logs.raw, ...client.bodies, ...spawnedLines], {
      JWT_SECRET: app.jwtSecret,
      token,
      password,
      'DSN password': server.password,
    });
  });
});
