/**
 * npm run test:compose-cluster: docker-compose.cluster.yml started for real (three orders-grpc replicas
 * behind haproxy on Postgres, Redis and NATS), with Debian's `docker-compose` 1.29 or compose v2 (`docker
 * compose`), whichever is installed (COMPOSE="docker-compose" or COMPOSE="docker compose" to choose), on
 * the images docker/standin/build.sh provides. First a smoke run as an operator would do it: through the
 * balancer it adds a user with orders-admin in a container, creates and reads orders over HTTP/1.1 and
 * gRPC (examples/grpc-client.ts over h2c), and requires that all three replicas served requests and that
 * each order is announced once across the fleet. Then test/cluster's checks on a fresh stack
 * (CLUSTER=compose, test/cluster/compose-cluster.ts). Always takes the stacks down (volumes too). Needs a
 * Docker engine, and root for the cluster checks' client addresses.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { compose, COMPOSE_ADDRESSES, COMPOSE_REPLICAS } from '../test/cluster/compose.ts';
import { freePort } from '../test/support/ports.ts';
import { runCommand } from './run-command.ts';

const PROJECT = `orderscluster${randomBytes(3).toString('hex')}`;
/** haproxy's fixed address on the stack's network (docker-compose.cluster.yml); the host reaches it directly. */
const BALANCER = `http://${COMPOSE_ADDRESSES.balancer}:8080`;
const STATS = `http://${COMPOSE_ADDRESSES.balancer}:8404/stats;csv`;
const REPLICAS = COMPOSE_REPLICAS;

// The balancer's host port: a free one, not the 8080 a developer's own service may hold.
const stack = compose(PROJECT, {
  ...process.env,
  JWT_SECRET: randomBytes(32).toString('base64url'),
  ORDERS_LB_PORT: String(await freePort()),
});
const must = stack.must;
const logLines = stack.logLines;

async function json(
  path: string,
  init: { method?: string; token?: string; body?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.token !== undefined) headers['authorization'] = `Bearer ${init.token}`;
  const response = await fetch(`${BALANCER}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function main(): Promise<void> {
  console.log(`test:compose-cluster: ${stack.version}, project ${PROJECT}`);
  must(['up', '-d', '--build']);
  // Ready: haproxy (started after the three replicas were healthy) sees all three UP.
  const deadline = Date.now() + 180_000;
  for (;;) {
    const csv = await fetch(STATS).then(
      (r) => r.text(),
      () => '',
    );
    const up = csv.split('\n').filter((line) => line.startsWith('replicas,orders') && line.split(',')[17] === 'UP').length;
    if (up === REPLICAS.length) break;
    if (Date.now() > deadline) throw new Error(`haproxy does not see ${REPLICAS.length} replicas UP:\n${csv}`);
    await sleep(500);
  }
  console.log('test:compose-cluster: haproxy sees orders1, orders2, orders3 UP');

  // A user, as an operator adds one: orders-admin in a replica's container, the password on stdin.
  must(['exec', '-T', 'orders1', 'node', 'bin/orders-admin.ts', 'users', 'add', 'alice'], 'alice-password\n');
  const login = await json('/auth/login', { method: 'POST', body: { username: 'alice', password: 'alice-password' } });
  if (login.status !== 200) throw new Error(`login through the balancer: ${login.status} ${JSON.stringify(login.body)}`);
  const token = String(login.body['token']);
  const ids: string[] = [];
  for (let i = 0; i < 9; i++) {
    const created = await json('/orders', { method: 'POST', token, body: { item: `compose-${i}`, quantity: 1 } });
    if (created.status !== 201) throw new Error(`create through the balancer: ${created.status} ${JSON.stringify(created.body)}`);
    ids.push(String(created.body['id']));
  }
  for (const id of ids) {
    const read = await json(`/orders/${id}`, { token });
    if (read.status !== 200 || read.body['id'] !== id) throw new Error(`read ${id} through the balancer: ${read.status}`);
  }
  // gRPC over h2c through haproxy: the example client (Login, CreateOrder, GetOrder, ListOrders, Recent).
  const grpc = spawnSync(process.execPath, ['examples/grpc-client.ts'], {
    env: { ...process.env, GRPC_ADDR: BALANCER.replace('http://', '') },
    encoding: 'utf8',
  });
  if (grpc.status !== 0)
    throw new Error(`examples/grpc-client.ts through the balancer: exit ${String(grpc.status)}\n${grpc.stdout}${grpc.stderr}`);
  console.log(
    grpc.stdout
      .trim()
      .split('\n')
      .map((l) => `  grpc: ${l}`)
      .join('\n'),
  );

  // Every replica served part of it, and every order was announced exactly once across the fleet.
  let placed = new Map<string, number>();
  const served = new Map<string, number>();
  const announceDeadline = Date.now() + 60_000;
  for (;;) {
    placed = new Map();
    for (const service of REPLICAS) {
      const lines = logLines(service);
      served.set(service, lines.filter((l) => l['msg'] === 'request').length);
      for (const line of lines)
        if (line['msg'] === 'order placed') placed.set(String(line['order_id']), (placed.get(String(line['order_id'])) ?? 0) + 1);
    }
    if (ids.every((id) => placed.has(id)) || Date.now() > announceDeadline) break;
    await sleep(500);
  }
  console.log(`test:compose-cluster: requests logged per replica: ${[...served].map(([s, n]) => `${s} ${n}`).join(', ')}`);
  const idle = REPLICAS.filter((s) => (served.get(s) ?? 0) === 0);
  if (idle.length > 0) throw new Error(`replicas that served nothing through the balancer: ${idle.join(', ')}`);
  const wrong = ids.filter((id) => placed.get(id) !== 1).map((id) => `${id}: ${placed.get(id) ?? 0}`);
  if (wrong.length > 0) throw new Error(`orders not announced exactly once: ${wrong.join(', ')}`);
  console.log(`test:compose-cluster: ${ids.length} REST orders created and read through haproxy, each announced once; gRPC client passed`);
}

let code = 0;
try {
  await main();
  console.log('test:compose-cluster: smoke run passed');
} catch (error) {
  console.error(`test:compose-cluster: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  for (const service of [...REPLICAS, 'haproxy'])
    console.error(`--- ${service}\n${stack.run(['logs', '--no-color', '--tail', '20', service]).stdout}`);
  code = 1;
} finally {
  stack.run(['down', '-v', '--remove-orphans']);
}
if (code === 0) {
  console.log('test:compose-cluster: test/cluster on a fresh stack (CLUSTER=compose)');
  process.env['CLUSTER'] = 'compose';
  code = await runCommand('npx', ['vitest', 'run', '--config', 'test/cluster/vitest.config.ts', ...process.argv.slice(2)]);
}
process.exit(code);
