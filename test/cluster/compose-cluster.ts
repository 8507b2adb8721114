import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { ORDER_STREAM_DEFAULTS } from '../../src/adapters/nats/order-stream.ts';
import { until } from '../support/eventually.ts';
import { insertUser, placedCounts } from '../support/replica-kit.ts';
import { CLUSTER_RPS, type Cluster, type ClusterReplica } from './cluster-shape.ts';
import { compose, COMPOSE_ADDRESSES, COMPOSE_REPLICAS, COMPOSE_SUBNET_PREFIX } from './compose.ts';
import { readStats, type Haproxy } from './haproxy.ts';

const STATS_URL = `http://${COMPOSE_ADDRESSES.balancer}:8404/stats`;
/** Host addresses added to the stack's bridge for clients of their own: .100 to .199 (the stack uses .2 to .13). */
const FIRST_CLIENT = 100;
const LAST_CLIENT = 199;

const asRoot = (args: readonly string[]): void => {
  const [bin = 'true', ...rest] = process.getuid?.() === 0 ? args : ['sudo', ...args];
  const done = spawnSync(bin, rest, { encoding: 'utf8' });
  if (done.status !== 0) throw new Error(`${args.join(' ')}: exit ${String(done.status)} ${done.stderr}`);
};

/**
 * docker-compose.cluster.yml as the checks' cluster, on the images the Dockerfile and
 * docker/standin/build.sh provide. The checks talk to haproxy's and each replica's address on the
 * stack's bridge network, not to a published port: Docker's port proxy would make every client the
 * bridge's gateway, and the rate limiter keys on the client (LIMIT-rate-trust-proxy). A client of its
 * own is an address added to the host's end of the bridge (needs root, as dockerd does). close() takes
 * the stack down with its volumes.
 */
export async function startComposeCluster(): Promise<Cluster> {
  const project = `orderscluster${randomBytes(3).toString('hex')}`;
  const stack = compose(project, {
    ...process.env,
    JWT_SECRET: randomBytes(32).toString('base64url'),
    RATE_LIMIT_RPS: String(CLUSTER_RPS),
    SESSION_RECENT: '50',
  });
  let nats: NatsConnection | undefined;
  let pool: pg.Pool | undefined;
  let nextClient = FIRST_CLIENT;
  let bridge: string | undefined;

  const ids = new Map<string, string>();
  const containerId = (service: string): string => ids.get(service) ?? ids.set(service, stack.containerId(service)).get(service)!;
  const replicas: ClusterReplica[] = COMPOSE_REPLICAS.map((name) => {
    const address = COMPOSE_ADDRESSES.replicas[name];
    return {
      name,
      baseUrl: `http://${address}:8080`,
      adminUrl: `http://${address}:8081`,
      // `docker logs` by container id: the checks poll these, and each compose 1.29 call starts a Python.
      lines: () =>
        spawnSync('docker', ['logs', containerId(name)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
          .stdout.split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      kill: () => void stack.must(['kill', '-s', 'SIGKILL', name]),
      exited: async () => void spawnSync('docker', ['wait', containerId(name)], { encoding: 'utf8' }),
    };
  });
  const haproxy: Haproxy = {
    stats: () => readStats(STATS_URL),
    log: () => stack.run(['logs', '--no-color', 'haproxy']).stdout,
    stop: async () => undefined,
  };
  const cluster: Cluster = {
    balancerUrl: `http://${COMPOSE_ADDRESSES.balancer}:8080`,
    replicas,
    haproxy,
    addUser: () =>
      insertUser(
        (pool ??= new pg.Pool({ connectionString: `postgres://orders:orders-dev@${COMPOSE_ADDRESSES.postgres}:5432/orders`, max: 2 })),
        'cluster',
      ),
    placedCounts: () => placedCounts(replicas.flatMap((r) => r.lines())),
    async notifierIdle() {
      nats ??= await connect({ servers: `nats://${COMPOSE_ADDRESSES.nats}:4222` });
      const info = await (await jetstreamManager(nats)).consumers.info(ORDER_STREAM_DEFAULTS.stream, ORDER_STREAM_DEFAULTS.durable);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    },
    clientAddress() {
      if (nextClient > LAST_CLIENT) throw new Error('compose cluster: out of client addresses');
      const address = `${COMPOSE_SUBNET_PREFIX}.${nextClient++}`;
      // Docker names a network's bridge after the first 12 characters of its id.
      bridge ??= `br-${spawnSync('docker', ['network', 'inspect', '-f', '{{.Id}}', `${project}_orders`], { encoding: 'utf8' })
        .stdout.trim()
        .slice(0, 12)}`;
      asRoot(['ip', 'address', 'add', `${address}/32`, 'dev', bridge]);
      return address;
    },
    async close() {
      await nats?.close().catch(() => undefined);
      await pool?.end().catch(() => undefined);
      // The bridge goes with the network, and the client addresses with it.
      stack.run(['down', '-v', '--remove-orphans']);
    },
  };

  try {
    stack.must(['up', '-d', '--build']);
    // Ready: haproxy (started after the three replicas were healthy) sees all three UP.
    await until(
      async () => {
        const stats = await readStats(STATS_URL).catch(() => undefined);
        return replicas.every((r) => stats?.get(`replicas/${r.name}`)?.['status'] === 'UP');
      },
      `haproxy to see ${replicas.length} replicas UP`,
      180_000,
    );
  } catch (error) {
    const logs = [...COMPOSE_REPLICAS, 'haproxy']
      .map((s) => `--- ${s}\n${stack.run(['logs', '--no-color', '--tail', '20', s]).stdout}`)
      .join('\n');
    await cluster.close();
    throw new Error(`${String(error)}\n${logs}`, { cause: error });
  }
  return cluster;
}
