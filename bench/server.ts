// A service child for the bench: startService (as the executables) with one transport and embedded or real
// backends, seeded for the scenarios, reporting its port and fixtures over IPC (bench/child.ts).
// Run by bench/run.ts, never by hand: it needs an IPC channel and BENCH_SERVER_CONFIG.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Env } from '../src/config/env.ts';
import type { Backends } from '../src/composition/backends.ts';
import type { Core } from '../src/transports/transport.ts';
import { startService } from '../src/composition/start-service.ts';
import { PostgresDatabase } from '../src/adapters/postgres/database.ts';
import { createOrder, type Order } from '../src/domain/order.ts';
import { createLogger, type LogLevel } from '../src/observability/logger.ts';
import { speedRing } from '../speed/ring.ts';
import { hashPassword } from '../src/service/password-hasher.ts';
import { announce, serveParent, type BareInsertResult, type Fixtures, type ServerChildConfig } from './child.ts';
import type { GrpcPeer } from './grpc-peers/grpcjs-peer.ts';
import { transportNamed } from '../test/support/transports.ts';

const SEED_CONCURRENCY = 10; // the pool size (POSTGRES_DEFAULTS.poolSize): more would only queue
const INSERT_SQL = 'INSERT INTO orders (id, user_id, item, quantity, status, created_at) VALUES ($1, $2, $3, $4, $5, $6)';

async function main(): Promise<void> {
  const config = JSON.parse(process.env['BENCH_SERVER_CONFIG'] ?? 'null') as ServerChildConfig | null;
  if (config === null) throw new Error('BENCH_SERVER_CONFIG is not set');
  const real = config.backend === 'real';
  const env: Env = {
    HTTP_ADDR: '127.0.0.1:0',
    ADMIN_ADDR: '127.0.0.1:0',
    JWT_SECRET: randomBytes(32).toString('base64url'),
    // The limiter stays in the chain (its cost is part of the product) but never refuses.
    RATE_LIMIT_RPS: '1000000000',
    LOG_LEVEL: config.logLevel,
    POSTGRES_DSN: process.env['POSTGRES_DSN'],
    REDIS_ADDR: process.env['REDIS_ADDR'],
    NATS_URL: process.env['NATS_URL'],
  };
  // As the executables run (composition/main.ts: the speed ring, its stdout included), so that the bench measures
  // what they do; `npm run bench -- --speed=off` measures the plain core.
  const speed = process.env['BENCH_SPEED'] === 'off' ? undefined : speedRing;
  const logger = createLogger(config.logLevel as LogLevel, speed?.stdout?.());
  const service = await startService({
    serviceName: `orders-bench-${config.transport}`,
    transport: transportNamed(config.transport).factory,
    env,
    logger,
    embedded: !real,
    speed,
    isolation: { schema: config.schema, uniqueSuffix: config.schema?.replace(/^bench_/, 'bench'), dropSchemaOnStop: true },
  });
  const { app, backends } = service;
  let peers: GrpcPeer[] = [];
  const database = backends.components.find((c): c is PostgresDatabase => c instanceof PostgresDatabase);
  serveParent({
    stop: () =>
      Promise.all(peers.map((peer) => peer.stop()))
        .then(() => service.stop())
        .then(() => logger.flush()),
    setLogLevel: (level) => {
      logger.level = level as LogLevel;
    },
    bareInsert: database === undefined ? undefined : (c, d) => bareInsert(database, c, d),
  });

  const ports = await service.ready;
  const seedStarted = performance.now();
  const fixtures = await seed(app.core.tokens, backends, config.listOrders);
  if (config.transport === 'grpc') {
    // The gRPC yardsticks (plain grpc-js, Connect as-was and tuned), loaded in the gRPC child only.
    const [{ startGrpcJsPeer }, { startConnectPeer }] = await Promise.all([
      import('./grpc-peers/grpcjs-peer.ts'),
      import('./grpc-peers/connect-peer.ts'),
    ]);
    peers = [await startGrpcJsPeer(app.core), await startConnectPeer(app.core, false), await startConnectPeer(app.core, true)];
  }
  const grpcPeers = peers.map(({ name, port }) => ({ name, port }));
  announce({ ready: { port: ports.api, fixtures, seedMs: performance.now() - seedStarted, grpcPeers } });
  await service.done;
}

/** Through the ports directly (not HTTP): seeding is set-up, not a measured run. */
async function seed(tokens: Core['tokens'], backends: Backends, listOrders: number): Promise<Fixtures> {
  const getUser = randomUUID();
  const cached = createOrder({ userId: getUser, item: 'bench item', quantity: 1 }, randomUUID(), new Date());
  await backends.repository.insert(cached);
  await backends.cache.set(cached);

  const listUser = randomUUID();
  const base = Date.now() - listOrders * 1000;
  const orders: Order[] = Array.from({ length: listOrders }, (_, i) =>
    createOrder({ userId: listUser, item: `item ${i}`, quantity: 1 + (i % 5) }, randomUUID(), new Date(base + i * 1000)),
  );
  for (let i = 0; i < orders.length; i += SEED_CONCURRENCY) {
    await Promise.all(orders.slice(i, i + SEED_CONCURRENCY).map((order) => backends.repository.insert(order)));
  }

  // The production scrypt cost (password-hasher.ts default): login is measured as users pay for it.
  const loginName = `bench-${randomBytes(4).toString('hex')}`;
  const loginPassword = randomBytes(12).toString('base64url');
  await backends.credentials.add({ id: randomUUID(), username: loginName, passwordHash: await hashPassword(loginPassword) });

  const postUser = randomUUID();
  return {
    getOrderId: cached.id,
    getToken: await tokens.issue(getUser, 'bench-get'),
    listToken: await tokens.issue(listUser, 'bench-list'),
    postToken: await tokens.issue(postUser, 'bench-post'),
    loginBody: JSON.stringify({ username: loginName, password: loginPassword }),
  };
}

/**
 * The floor of POST /orders: the repository's INSERT statement straight through the service's own pg
 * Pool (same size, same connections), `concurrency` callers in a loop, bounded in time.
 */
async function bareInsert(database: PostgresDatabase, concurrency: number, durationMs: number): Promise<BareInsertResult> {
  const user = randomUUID();
  const latenciesMs: number[] = [];
  let errors = 0;
  const begin = performance.now();
  const deadline = begin + durationMs;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await database.query(INSERT_SQL, [randomUUID(), user, 'bench item', 1, 'pending', new Date()]);
        latenciesMs.push(performance.now() - t0);
      } catch {
        errors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { errors, elapsedMs: performance.now() - begin, latenciesMs };
}

main().catch((error: unknown) => {
  announce({ failed: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 100).unref();
});
