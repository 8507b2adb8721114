import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { startNatsServer, startRedisServer, type LocalServer } from './local-servers.ts';
import { freePort } from '../support/ports.ts';
import { pacedLoad } from '../support/paced-load.ts';
import { insertUser, placedCounts } from '../support/replica-kit.ts';
import { startPostgresServer, type PostgresServer } from './postgres-server.ts';
import { spawnBin, type SpawnedBin } from '../support/spawn-bin.ts';

/**
 * The fault fleet: private Postgres, Redis and NATS (JetStream) servers, and N replicas of the real
 * executable (`node bin/orders-stdlib.ts`) on them, with their log lines kept across restarts.
 */
export interface Replica {
  readonly index: number;
  readonly baseUrl: string;
  readonly adminUrl: string;
  /** The running process, or undefined while stopped. */
  process: SpawnedBin | undefined;
}

export interface Fleet {
  readonly postgres: PostgresServer;
  readonly redis: LocalServer;
  readonly nats: LocalServer;
  readonly replicas: readonly Replica[];
  /** Every line of every process any replica ever ran. */
  lines(): string[];
  /** `order placed` lines per order_id, across every replica and restart. */
  placedCounts(): Map<string, number>;
  start(replica: Replica): Promise<void>;
  /** SIGTERM; resolves with the exit code. */
  stop(replica: Replica): Promise<number | null>;
  /** A user in the private database, logged in through replica 0; returns its bearer token. */
  login(): Promise<string>;
  /** What no log line may contain: JWT_SECRET and the private Postgres password. */
  readonly secrets: Readonly<Record<string, string>>;
  /** The JetStream stream's stored message count. */
  streamMessages(): Promise<number>;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  close(): Promise<void>;
}

export async function startFleet(size: number): Promise<Fleet> {
  const postgres = await startPostgresServer();
  const redis = await startRedisServer();
  const nats = await startNatsServer();
  const jwtSecret = randomBytes(32).toString('base64url');
  const retired: SpawnedBin[] = [];
  const replicas: Replica[] = [];
  for (let index = 0; index < size; index++) {
    const [http, admin] = [await freePort(), await freePort()];
    replicas.push({ index, baseUrl: `http://127.0.0.1:${http}`, adminUrl: `http://127.0.0.1:${admin}`, process: undefined });
  }
  const env = (replica: Replica): Record<string, string> => ({
    POSTGRES_DSN: postgres.dsn,
    REDIS_ADDR: `127.0.0.1:${redis.port}`,
    NATS_URL: `nats://127.0.0.1:${nats.port}`,
    JWT_SECRET: jwtSecret,
    HTTP_ADDR: replica.baseUrl.slice('http://'.length),
    ADMIN_ADDR: replica.adminUrl.slice('http://'.length),
    // The shared budget in the private Redis, high enough never to refuse: its outage path is shown here.
    RATE_LIMIT_STORE: 'redis',
    RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'info',
  });
  const pool = new pg.Pool({ connectionString: postgres.dsn, max: 2 });
  pool.on('error', () => undefined);
  let nc: NatsConnection | undefined;
  let jsm: JetStreamManager | undefined;

  const processes = (): SpawnedBin[] => [...retired, ...replicas.flatMap((r) => (r.process ? [r.process] : []))];
  const fleet: Fleet = {
    postgres,
    redis,
    nats,
    replicas,
    lines: () => processes().flatMap((p) => p.rawLines()),
    placedCounts: () => placedCounts(processes().flatMap((p) => p.lines)),
    async start(replica) {
      if (replica.process !== undefined) throw new Error(`replica ${replica.index} is running`);
      replica.process = spawnBin('bin/orders-stdlib.ts', [], env(replica));
      await replica.process.waitReady(replica.adminUrl, 30_000);
    },
    async stop(replica) {
      const process = replica.process;
      if (process === undefined) return null;
      const code = await process.stop();
      retired.push(process);
      replica.process = undefined;
      return code;
    },
    secrets: { JWT_SECRET: jwtSecret, 'DSN password': postgres.password },
    async login() {
      const { username, password } = await insertUser(pool, 'fleet');
      const response = await fetch(`${replicas[0]!.baseUrl}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password }),
      });
      if (response.status !== 200) throw new Error(`login: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { token: string }).token;
    },
    async streamMessages() {
      nc ??= await connect({ servers: [`nats://127.0.0.1:${nats.port}`], maxReconnectAttempts: -1 });
      jsm ??= await jetstreamManager(nc);
      return (await jsm.streams.info('ORDERS')).state.messages;
    },
    query: (text, values) => pool.query(text, values),
    async close() {
      for (const replica of replicas) {
        if (replica.process !== undefined) {
          replica.process.kill();
          await replica.process.exited;
        }
        replica.process = undefined;
      }
      await nc?.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await nats.stop();
      await redis.stop();
      await postgres.destroy();
    },
  };
  try {
    // One at a time: the first start migrates (the others would wait on the advisory lock anyway).
    for (const replica of replicas) await fleet.start(replica);
  } catch (error) {
    await fleet.close();
    throw error;
  }
  return fleet;
}

export interface LoadResult {
  /** Order ids answered 201. */
  readonly created: string[];
  /** Every other outcome: status code, or the error's name for a failed request. */
  readonly other: string[];
}

/**
 * `ratePerSecond` creates, spread round-robin over the replicas that are running, each fired on its
 * own schedule (an open loop: a slow answer does not slow the load), until `until` resolves (or ten
 * minutes' worth were sent).
 */
export async function createLoad(fleet: Fleet, token: string, ratePerSecond: number, until: Promise<unknown>): Promise<LoadResult> {
  const created: string[] = [];
  const other: string[] = [];
  let done = false;
  void until.finally(() => (done = true));
  const create = async (i: number): Promise<void> => {
    const live = fleet.replicas.filter((r) => r.process !== undefined);
    const replica = live[i % Math.max(1, live.length)];
    if (replica === undefined) return;
    await fetch(`${replica.baseUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ item: `load-${i}`, quantity: 1 }),
      signal: AbortSignal.timeout(20_000),
    })
      .then(async (response) => {
        const text = await response.text();
        if (response.status === 201) created.push((JSON.parse(text) as { id: string }).id);
        else other.push(String(response.status));
      })
      .catch((error: unknown) => void other.push(error instanceof Error ? error.name : String(error)));
  };
  await pacedLoad(600 * ratePerSecond, ratePerSecond, create, { stop: () => done });
  return { created, other };
}

/** Polls until every id has at least one `order placed` line (or the bound passes); returns those still missing. */
export async function awaitAnnounced(fleet: Fleet, ids: readonly string[], boundMs: number): Promise<string[]> {
  const deadline = performance.now() + boundMs;
  for (;;) {
    const counts = fleet.placedCounts();
    const missing = ids.filter((id) => !counts.has(id));
    if (missing.length === 0 || performance.now() > deadline) return missing;
    await sleep(200);
  }
}

/** Ids with more than one `order placed` line. */
export function doubled(fleet: Fleet): Array<[string, number]> {
  return [...fleet.placedCounts()].filter(([, count]) => count > 1);
}

/** Polls a replica's /healthz until `node` (publisher, cache, database) fails; resolves with its error text. */
export async function untilNodeFails(replica: Replica, node: string, boundMs: number): Promise<string | undefined> {
  const deadline = performance.now() + boundMs;
  while (performance.now() < deadline) {
    const report = await fetch(`${replica.adminUrl}/healthz`, { signal: AbortSignal.timeout(3_000) })
      .then((r) => r.json() as Promise<{ nodes?: Array<{ name: string; status: string; error?: string }> }>)
      .catch(() => undefined);
    const failing = report?.nodes?.find((n) => n.name === node && n.status !== 'ok');
    if (failing !== undefined) return failing.error ?? '';
    await sleep(100);
  }
  return undefined;
}
