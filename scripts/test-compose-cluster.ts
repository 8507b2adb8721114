/**
 * npm run test:compose-cluster: docker-compose.cluster.yml started for real (three orders-grpc replicas
 * behind haproxy on Postgres, Redis and NATS), with Debian's `docker-compose` 1.29 or compose v2 (`docker
 * compose`), whichever is installed (COMPOSE="docker-compose" or COMPOSE="docker compose" to choose), on
 * the images docker/standin/build.sh provides. A smoke run, not test/cluster's checks: through the balancer
 * it adds a user, creates and reads orders over HTTP/1.1 and gRPC (examples/grpc-client.ts over h2c), and
 * requires that all three replicas served requests and that each order is announced once across the fleet.
 * Always takes the stack down (volumes too). Needs a Docker engine.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/support/ports.ts';

const FILE = 'docker-compose.cluster.yml';
const PROJECT = `orderscluster${randomBytes(3).toString('hex')}`;
/** haproxy's fixed address on the stack's network (docker-compose.cluster.yml); the host reaches it directly. */
const BALANCER = 'http://172.30.70.10:8080';
const STATS = 'http://172.30.70.10:8404/stats;csv';
const REPLICAS = ['orders1', 'orders2', 'orders3'];

function composeCommand(): string[] {
  const chosen = process.env['COMPOSE'];
  if (chosen !== undefined) return chosen.split(' ');
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose'];
  throw new Error('neither `docker compose` (v2) nor `docker-compose` (1.29, Debian: apt-get install docker-compose) is installed');
}

const [composeBin = 'docker-compose', ...composePrefix] = composeCommand();
// The balancer's host port: a free one, not the 8080 a developer's own service may hold.
const env = { ...process.env, JWT_SECRET: randomBytes(32).toString('base64url'), ORDERS_LB_PORT: String(await freePort()) };

function compose(args: readonly string[], input?: string): { status: number; stdout: string; stderr: string } {
  const run = spawnSync(composeBin, [...composePrefix, '-f', FILE, '-p', PROJECT, ...args], { env, input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: run.status ?? 1, stdout: run.stdout ?? '', stderr: run.stderr ?? '' };
}

function must(args: readonly string[], input?: string): string {
  const run = compose(args, input);
  if (run.status !== 0) throw new Error(`compose ${args.join(' ')}: exit ${run.status}\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-2000)}`);
  return run.stdout;
}

/** One replica's JSON log lines (stdout); compose prefixes each with the container's name. */
function logLines(service: string): Record<string, unknown>[] {
  return must(['logs', '--no-color', service])
    .split('\n')
    .map((line) => line.slice(line.indexOf('{')))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function json(path: string, init: { method?: string; token?: string; body?: unknown } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.token !== undefined) headers['authorization'] = `Bearer ${init.token}`;
  const response = await fetch(`${BALANCER}${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function main(): Promise<void> {
  console.log(`test:compose-cluster: ${[composeBin, ...composePrefix].join(' ')} ${spawnSync(composeBin, [...composePrefix, 'version', '--short'], { encoding: 'utf8' }).stdout.trim()}, project ${PROJECT}`);
  must(['up', '-d', '--build']);
  // Ready: haproxy (started after the three replicas were healthy) sees all three UP.
  const deadline = Date.now() + 180_000;
  for (;;) {
    const csv = await fetch(STATS).then((r) => r.text(), () => '');
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
  const grpc = spawnSync(process.execPath, ['examples/grpc-client.ts'], { env: { ...process.env, GRPC_ADDR: BALANCER.replace('http://', '') }, encoding: 'utf8' });
  if (grpc.status !== 0) throw new Error(`examples/grpc-client.ts through the balancer: exit ${String(grpc.status)}\n${grpc.stdout}${grpc.stderr}`);
  console.log(grpc.stdout.trim().split('\n').map((l) => `  grpc: ${l}`).join('\n'));

  // Every replica served part of it, and every order was announced exactly once across the fleet.
  let placed = new Map<string, number>();
  const served = new Map<string, number>();
  const announceDeadline = Date.now() + 60_000;
  for (;;) {
    placed = new Map();
    for (const service of REPLICAS) {
      const lines = logLines(service);
      served.set(service, lines.filter((l) => l['msg'] === 'request').length);
      for (const line of lines) if (line['msg'] === 'order placed') placed.set(String(line['order_id']), (placed.get(String(line['order_id'])) ?? 0) + 1);
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
  console.log('test:compose-cluster: passed');
} catch (error) {
  console.error(`test:compose-cluster: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  for (const service of [...REPLICAS, 'haproxy']) console.error(`--- ${service}\n${compose(['logs', '--no-color', '--tail', '20', service]).stdout}`);
  code = 1;
} finally {
  compose(['down', '-v', '--remove-orphans']);
}
process.exit(code);
