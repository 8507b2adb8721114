import { randomBytes, randomInt } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { ORDER_STREAM_DEFAULTS } from '../../src/adapters/nats/order-stream.ts';
import { until } from '../support/eventually.ts';
import { freePort } from '../support/ports.ts';
import { dropSchemaRun, insertUser, placedCounts } from '../support/replica-kit.ts';
import { spawnBin, type SpawnedBin } from '../support/spawn-bin.ts';
import { transportNamed } from '../support/transports.ts';
import { startHaproxy, type Haproxy } from './haproxy.ts';
import { CLUSTER_RPS, type Cluster, type ClusterReplica } from './cluster-shape.ts';

export { CLUSTER_RPS, type Cluster, type ClusterReplica };

const REPLICAS = 3;

/** A loopback address other than 127.0.0.1: a client of its own for the rate limiter, fresh every run. */
function loopbackClient(): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

/**
 * The cluster the checks run on: CLUSTER=compose (npm run test:compose-cluster) is the stack of
 * docker-compose.cluster.yml on containers; otherwise processes on the machine's real backends.
 */
export async function startCluster(env: NodeJS.ProcessEnv = process.env): Promise<Cluster> {
  if (env['CLUSTER'] === 'compose') return (await import('./compose-cluster.ts')).startComposeCluster();
  return startProcessCluster(env);
}

/**
 * The cluster on the machine's real Postgres, Redis and NATS: three `orders-grpc` processes on one
 * schema of their own (POSTGRES_SCHEMA, which also gives them a stream and subject of their own), sharing
 * one Redis rate-limit budget, behind haproxy (deploy/haproxy/haproxy.cfg) trusted as the only proxy.
 * close() kills every process and removes the schema, the stream and the cache entries of its orders.
 */
async function startProcessCluster(env: NodeJS.ProcessEnv): Promise<Cluster> {
  const [dsn, redisAddr, natsUrl] = [env['POSTGRES_DSN'], env['REDIS_ADDR'], env['NATS_URL']];
  if (!dsn || !redisAddr || !natsUrl) throw new Error('the cluster needs POSTGRES_DSN, REDIS_ADDR and NATS_URL (docs/real-backends.md)');
  const schema = `cluster_${randomBytes(6).toString('hex')}`;
  const stream = `${ORDER_STREAM_DEFAULTS.stream}_${schema}`;
  const jwtSecret = randomBytes(32).toString('base64url');
  const bin = transportNamed('grpc').bin;
  const replicas: (ClusterReplica & { readonly process: SpawnedBin })[] = [];
  let haproxy: Haproxy | undefined;
  let balancerUrl: string | undefined;
  let nats: NatsConnection | undefined;
  const pool = new pg.Pool({ connectionString: dsn, max: 2, options: `-c search_path=${schema}` });
  pool.on('error', () => undefined);

  const start = async (index: number): Promise<ClusterReplica> => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const child = {
      name: `orders${index + 1}`,
      baseUrl: `http://127.0.0.1:${port}`,
      adminUrl: `http://127.0.0.1:${adminPort}`,
      process: spawnBin(bin, [], {
        POSTGRES_DSN: dsn,
        POSTGRES_SCHEMA: schema,
        REDIS_ADDR: redisAddr,
        NATS_URL: natsUrl,
        JWT_SECRET: jwtSecret,
        HTTP_ADDR: `127.0.0.1:${port}`,
        ADMIN_ADDR: `127.0.0.1:${adminPort}`,
        RATE_LIMIT_STORE: 'redis',
        RATE_LIMIT_RPS: String(CLUSTER_RPS),
        // haproxy reaches the replicas from 127.0.0.1; clients come from other loopback addresses.
        TRUST_PROXY: '127.0.0.1',
        SESSION_RECENT: '50',
        LOG_LEVEL: 'info',
      }),
    };
    const replica = {
      ...child,
      lines: () => child.process.lines,
      kill: () => child.process.kill(),
      exited: async () => void (await child.process.exited),
    };
    replicas.push(replica);
    await replica.process.waitReady(replica.adminUrl, 60_000);
    return replica;
  };

  const cluster: Cluster = {
    get balancerUrl() {
      if (balancerUrl === undefined) throw new Error('haproxy is not running');
      return balancerUrl;
    },
    replicas,
    get haproxy() {
      if (haproxy === undefined) throw new Error('haproxy is not running');
      return haproxy;
    },
    addUser: () => insertUser(pool, 'cluster'),
    placedCounts: () => placedCounts(replicas.flatMap((r) => r.process.lines)),
    clientAddress: loopbackClient,
    async notifierIdle() {
      nats ??= await connect({ servers: natsUrl.split(',') });
      const info = await (await jetstreamManager(nats)).consumers.info(stream, ORDER_STREAM_DEFAULTS.durable);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    },
    async close() {
      await haproxy?.stop();
      for (const replica of replicas) {
        replica.process.kill();
        await replica.process.exited;
      }
      await nats?.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await dropSchemaRun({ dsn, redisAddr, natsUrl }, schema).catch(() => undefined);
    },
  };

  try {
    // The first start migrates the schema; the other two then start side by side.
    await start(0);
    await Promise.all(Array.from({ length: REPLICAS - 1 }, (_, i) => start(i + 1)));
    replicas.sort((a, b) => a.name.localeCompare(b.name));
    const [lbPort, statsPort] = [await freePort(), await freePort()];
    const statsUrl = `http://127.0.0.1:${statsPort}/stats`;
    const addresses = Object.fromEntries(
      replicas.flatMap((r, i) => [
        [`ORDERS_${i + 1}`, new URL(r.baseUrl).host],
        [`ORDERS_${i + 1}_ADMIN_PORT`, new URL(r.adminUrl).port],
      ]),
    );
    haproxy = startHaproxy({ ORDERS_LB_ADDR: `127.0.0.1:${lbPort}`, ORDERS_STATS_ADDR: `127.0.0.1:${statsPort}`, ...addresses }, statsUrl);
    const proxy = haproxy;
    await until(
      async () => {
        const stats = await proxy.stats().catch(() => undefined);
        return replicas.every((r) => stats?.get(`replicas/${r.name}`)?.['status'] === 'UP');
      },
      `haproxy to see ${REPLICAS} replicas UP`,
      30_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; haproxy said: ${proxy.log().slice(-1_000)}`);
    });
    balancerUrl = `http://127.0.0.1:${lbPort}`;
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}
