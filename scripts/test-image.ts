/**
 * npm run test:image [-- --transport stdlib,koa,grpc]: what ships is what is tested. Builds the
 * Dockerfile's image, starts PostgreSQL, Redis and NATS containers on a private network, migrates and adds
 * two users with the image's own orders-admin, then for each executable: starts it from the image, waits
 * for /readyz, runs the conformance suite black-box against it (npm run conformance -- --url …), stops
 * it with SIGTERM and requires exit code 0; every /simulator path on its admin listener must answer 404
 * (the simulator exists only with --embedded, rule SIM-embedded-only). Last, orders-grpc --embedded from the image, on no
 * backends, under the same suite with nothing skipped: it drives that instance's simulator and test-control
 * API (users, records, faults, its log), shares its JWT_SECRET (CONFORMANCE_JWT_SECRET), sends its spans
 * to the runner's OTLP receiver, and a case with settings gets a container of its own from the image
 * (--launch scripts/image-launcher.ts, on the host's network). Exits 1 without running anything when no Docker engine answers.
 * The base images come from docker/standin/build.sh (pulled, or stand-ins built from Debian packages).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { GenericContainer, Network, Wait, type StartedNetwork, type StartedTestContainer } from 'testcontainers';
import { startContainerBackends, type ContainerBackends } from '../test/containers/container-backends.ts';
import { requireDockerAndBaseImages } from '../test/containers/docker-engine.ts';
import { resultsPathOf } from '../conformance/runner/results.ts';
import { runCommand as run } from './run-command.ts';

const IMAGE = 'orders:test-image';

/** Per executable: the conformance wires it speaks and its REST flavour (conformance/README.md). */
const EXECUTABLES = {
  stdlib: { bin: 'bin/orders-stdlib.ts', drivers: 'rest-http1', restVariant: 'stdlib-router' },
  koa: { bin: 'bin/orders-koa.ts', drivers: 'rest-http1', restVariant: 'router-framework' },
  grpc: { bin: 'bin/orders-grpc.ts', drivers: 'rest-http1,rest-h2c,grpc', restVariant: 'stdlib-router' },
} as const;
type Executable = keyof typeof EXECUTABLES;

async function must(label: string, code: Promise<number>): Promise<void> {
  const status = await code;
  if (status !== 0) throw new Error(`test:image: ${label} failed (exit ${status})`);
}

/** orders-admin from the image, on the backends' network (the password on stdin, never in argv). */
function admin(network: StartedNetwork, backends: ContainerBackends, args: readonly string[], input?: string): Promise<number> {
  const dsn = backends.inNetwork?.POSTGRES_DSN ?? '';
  return run(
    'docker',
    ['run', '--rm', '-i', '--network', network.getName(), '-e', `POSTGRES_DSN=${dsn}`, IMAGE, 'bin/orders-admin.ts', ...args],
    { input: input ?? '' },
  );
}

/** The executable from the image: on the backends' network, or --embedded (backends undefined) on none. */
async function startService(
  network: StartedNetwork,
  backends: ContainerBackends | undefined,
  bin: string,
  jwtSecret: string,
  otlpPort: number,
): Promise<StartedTestContainer> {
  const inNetwork = backends?.inNetwork;
  if (backends !== undefined && inNetwork === undefined) throw new Error('test:image: backends are not on the network');
  // --embedded: spans to the runner's OTLP receiver on the host (conformance/README.md), exported at once.
  const container =
    inNetwork === undefined
      ? new GenericContainer(IMAGE)
          .withCommand([bin, '--embedded'])
          .withExtraHosts([{ host: 'host.docker.internal', ipAddress: 'host-gateway' }])
          .withEnvironment({ OTLP_ENDPOINT: `host.docker.internal:${otlpPort}`, OTEL_BSP_SCHEDULE_DELAY: '50', RATE_LIMIT_RPS: '100000' })
      : new GenericContainer(IMAGE).withNetwork(network).withCommand([bin]);
  return container
    .withEnvironment({ ...inNetwork, JWT_SECRET: jwtSecret, HTTP_ADDR: ':8080', ADMIN_ADDR: ':8081', LOG_LEVEL: 'info' })
    .withExposedPorts(8080, 8081)
    .withWaitStrategy(Wait.forHttp('/readyz', 8081).forStatusCode(200))
    .withStartupTimeout(60_000)
    .start();
}

/** SIGTERM (docker stop sends it first) and the exit code the image's process returned. */
async function stopService(container: StartedTestContainer): Promise<number | undefined> {
  const id = container.getId();
  await container.stop({ remove: false, timeout: 20_000 });
  const code = Number.parseInt(execFileSync('docker', ['inspect', '--format', '{{.State.ExitCode}}', id], { encoding: 'utf8' }).trim(), 10);
  await run('docker', ['rm', '-f', id]);
  return Number.isNaN(code) ? undefined : code;
}

/** Without --embedded the simulator's control API does not exist: each of its paths is a 404. */
async function simulatorAbsent(adminUrl: string): Promise<string[]> {
  const probes = [
    ['GET', '/simulator'],
    ['PUT', '/simulator/components/cache'],
    ['POST', '/simulator/clock/advance'],
    ['POST', '/simulator/reset'],
  ] as const;
  const wrong: string[] = [];
  for (const [method, path] of probes) {
    const body = method === 'GET' ? undefined : method === 'PUT' ? '{"state":"down"}' : '{"ms":1000}';
    const res = await fetch(adminUrl + path, { method, body, headers: body === undefined ? {} : { 'content-type': 'application/json' } });
    await res.arrayBuffer();
    if (res.status !== 404) wrong.push(`${method} ${path} answered ${res.status}, expected 404 without --embedded`);
  }
  return wrong;
}

/** A port the runner's OTLP receiver can take: asked of the OS, then given back. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The cases the last external run skipped, one failure line each. */
function skippedOn(label: string): string[] {
  const results = JSON.parse(readFileSync(resultsPathOf('external'), 'utf8')) as {
    results: { outcome: string; id: string; detail?: string }[];
  };
  return results.results.filter((r) => r.outcome === 'skip').map((r) => `${label}: skipped ${r.id} (${r.detail ?? ''})`);
}

/** The image is the only service under test: no in-process target on the machine's own backends. */
const BLACK_BOX_ENV = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL'].includes(name)),
);

/**
 * One executable from the image (backends undefined: --embedded, on no backends, where the black-box
 * suite drives its simulator) under the conformance suite, then SIGTERM, which must exit 0.
 */
async function conformanceRun(
  network: StartedNetwork,
  backends: ContainerBackends | undefined,
  name: Executable,
  jwtSecret: string,
  users: readonly { name: string; password: string }[],
): Promise<string[]> {
  const { bin, drivers, restVariant } = EXECUTABLES[name];
  const label = backends === undefined ? `${bin} --embedded` : bin;
  console.log(`test:image: ${label} from ${IMAGE}`);
  const otlpPort = await freePort();
  const service = await startService(network, backends, bin, jwtSecret, otlpPort);
  const adminUrl = `http://${service.getHost()}:${service.getMappedPort(8081)}`;
  const failures: string[] = [];
  let code: number;
  try {
    if (backends !== undefined) failures.push(...(await simulatorAbsent(adminUrl)).map((line) => `${bin}: ${line}`));
    code = await run(
      process.execPath,
      [
        'scripts/conformance.ts',
        '--url',
        `http://${service.getHost()}:${service.getMappedPort(8080)}`,
        '--admin-url',
        adminUrl,
        ...users.flatMap((user) => ['--user', `${user.name}:${user.password}`]),
        '--driver',
        drivers,
        '--rest-variant',
        restVariant,
        // --embedded: the runner's view of everything, and an instance of its own for a case with settings.
        ...(backends === undefined
          ? ['--otlp-listen', `0.0.0.0:${otlpPort}`, '--launch', `scripts/image-launcher.ts ${IMAGE} ${bin}`]
          : []),
      ],
      { env: backends === undefined ? { ...BLACK_BOX_ENV, CONFORMANCE_JWT_SECRET: jwtSecret } : BLACK_BOX_ENV },
    );
    // On --embedded nothing may be skipped: every case runs black-box (conformance/README.md).
    if (backends === undefined) failures.push(...skippedOn(label));
  } finally {
    const exit = await stopService(service);
    if (exit !== 0) failures.push(`${label}: exit code ${String(exit)} after SIGTERM`);
  }
  if (code !== 0) failures.push(`${label}: conformance failed (exit ${code})`);
  return failures;
}

const { values } = parseArgs({ options: { transport: { type: 'string' } }, strict: true });
const selected = (values.transport?.split(',') ?? Object.keys(EXECUTABLES)) as Executable[];
for (const name of selected) if (!(name in EXECUTABLES)) throw new Error(`test:image: unknown transport ${name}`);

await requireDockerAndBaseImages('test:image');

await must('docker build', run('docker', ['build', '--quiet', '--tag', IMAGE, '.']));
const network = await new Network().start();
let backends: ContainerBackends | undefined;
const failures: string[] = [];
try {
  backends = await startContainerBackends(network);
  const users = ['alice', 'bob'].map((name) => ({ name, password: randomBytes(12).toString('hex') }));
  await must('orders-admin migrate', admin(network, backends, ['migrate']));
  for (const user of users)
    await must(`orders-admin users add ${user.name}`, admin(network, backends, ['users', 'add', user.name], user.password));
  const jwtSecret = randomBytes(32).toString('hex');

  for (const name of selected) failures.push(...(await conformanceRun(network, backends, name, jwtSecret, users)));
  // orders-grpc --embedded from the image: the suite finds the simulator on its admin listener and uses it.
  if (selected.includes('grpc')) failures.push(...(await conformanceRun(network, undefined, 'grpc', jwtSecret, [])));
} catch (error) {
  failures.push(error instanceof Error ? error.message : String(error));
} finally {
  await backends?.stop();
  await network.stop();
}
if (failures.length > 0) {
  console.error(`test:image: FAILED\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`test:image: ${selected.join(', ')} passed the conformance suite from ${IMAGE}`);
