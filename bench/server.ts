// A service child for the bench: createApp + runComponents with one transport and embedded or real
// backends, seeded for the scenarios, reporting its port and fixtures over IPC (bench/ipc-protocol.ts).
// Run by bench/run.ts, never by hand: it needs an IPC channel and BENCH_SERVER_CONFIG.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Env } from '../src/config/env.ts';
import { loadServiceConfig } from '../src/config/service-config.ts';
import type { Backends } from '../src/composition/backends.ts';
import { createApp, type TransportFactory } from '../src/composition/create-app.ts';
import { createEmbeddedBackends } from '../src/composition/embedded-backends.ts';
import { createRealBackends } from '../src/composition/real-backends.ts';
import { PostgresDatabase } from '../src/adapters/postgres/postgres-database.ts';
import { createOrder, type Order } from '../src/domain/order.ts';
import { runComponents } from '../src/lifecycle/runner.ts';
import { createLogger, type LogLevel } from '../src/observability/logger.ts';
import { hashPassword } from '../src/service/password-hasher.ts';
import { announce, serveParent } from './child-agent.ts';
import type { BareInsertResult, Fixtures, ServerChildConfig, TransportName } from './ipc-protocol.ts';

/** Where each transport is expected; a missing file or export means "not written yet": skipped. */
const TRANSPORT_MODULES: Record<TransportName, { path: string; exportName: string }> = {
  stdlib: { path: '../src/transports/stdlib/stdlib-transport.ts', exportName: 'stdlibTransport' },
  koa: { path: '../src/transports/koa/koa-transport.ts', exportName: 'koaTransport' },
  grpc: { path: '../src/transports/grpc/grpc-transport.ts', exportName: 'grpcTransport' },
};

const SEED_CONCURRENCY = 10; // the pool size (POSTGRES_DEFAULTS.poolSize): more would only queue
const INSERT_SQL = 'INSERT INTO orders (id, user_id, item, quantity, status, created_at) VALUES ($1, $2, $3, $4, $5, $6)';

async function loadTransport(name: TransportName): Promise<TransportFactory> {
  const { path, exportName } = TRANSPORT_MODULES[name];
  const module = (await import(path)) as Record<string, unknown>;
  const factory = module[exportName];
  if (typeof factory !== 'function') throw new Error(`${path} has no export ${exportName}`);
  return factory as TransportFactory;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env['BENCH_SERVER_CONFIG'] ?? 'null') as ServerChildConfig | null;
  if (config === null) throw new Error('BENCH_SERVER_CONFIG is not set');
  const transport = await loadTransport(config.transport);
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
  const logger = createLogger(config.logLevel);
  const serviceConfig = loadServiceConfig(env, { embedded: !real });
  const backends: Backends = real
    ? await createRealBackends(env, logger, { schema: config.schema, uniqueSuffix: config.uniqueSuffix, dropSchemaOnStop: true })
    : await createEmbeddedBackends(logger, { seedDemoUsers: false });
  const app = createApp({ config: serviceConfig, logger, backends, transport, serviceName: `orders-bench-${config.transport}` });
  const controller = new AbortController();
  const running = runComponents(app.components, controller.signal, logger);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      controller.abort();
      await running.catch(() => undefined);
      logger.flush();
    })();
    return stopping;
  };
  const database = backends.components.find((c): c is PostgresDatabase => c instanceof PostgresDatabase);
  serveParent({
    stop,
    setLogLevel: (level) => {
      logger.level = level as LogLevel;
    },
    bareInsert: database === undefined ? undefined : (c, d, m) => bareInsert(database, c, d, m),
  });

  await untilListening(() => app.api.server().listening && app.admin.server().listening, running);
  const seedStarted = performance.now();
  const fixtures = await seed(app.core.tokens, backends, config.listOrders);
  announce({ type: 'ready', port: app.api.port(), adminPort: app.admin.port(), fixtures, seedMs: performance.now() - seedStarted });
  await running;
}

async function untilListening(listening: () => boolean, running: Promise<void>): Promise<void> {
  let failure: unknown;
  running.catch((error: unknown) => (failure = error));
  for (let i = 0; i < 3_000; i++) {
    if (failure !== undefined) throw failure;
    if (listening()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('server did not start listening within 30 s');
}

interface TokenIssuer {
  issue(userId: string, username: string): Promise<string>;
}

/** Through the ports directly (not HTTP): seeding is set-up, not a measured run. */
async function seed(tokens: TokenIssuer, backends: Backends, listOrders: number): Promise<Fixtures> {
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
 * Pool (same size, same connections), `concurrency` callers in a loop, bounded in time and count.
 */
async function bareInsert(database: PostgresDatabase, concurrency: number, durationMs: number, maxCount: number): Promise<BareInsertResult> {
  const user = randomUUID();
  const latenciesMs: number[] = [];
  let started = 0;
  let errors = 0;
  const begin = performance.now();
  const deadline = begin + durationMs;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline && started < maxCount) {
      started += 1;
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
  return { count: latenciesMs.length, errors, elapsedMs: performance.now() - begin, latenciesMs };
}

main().catch((error: unknown) => {
  announce({ type: 'failed', error: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 100).unref();
});
