/**
 * Which of the repository's files one request runs through, measured with V8's precise coverage: the
 * service starts in this process on the embedded fakes (as `--embedded` does), one request warms it up,
 * then each of five measured requests is a coverage delta of its own (takePreciseCoverage resets the
 * counters) and a file is listed when one of its functions ran in all five, so start-up and background
 * loops (the outbox relay polls every 50 ms) drop out. The client is the conformance drivers (node:http;
 * @grpc/grpc-js with @grpc/proto-loader over proto/), whose own files are left out of the list.
 *   node scripts/request-crossing.ts stdlib|koa|grpc [get|create] [--speed] >/dev/null
 * The service's log lines go to stdout, as an executable's do; the list goes to stderr. docs/extending.md
 * ("What a request crosses") holds its output.
 */
import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const [transportName = 'stdlib', operation = 'get'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const withSpeed = process.argv.includes('--speed');

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

/** The repository files (outside node_modules, the drivers and this script) with a function that ran since the last call. */
async function ranSinceLastTake(): Promise<Set<string>> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith('file:')) continue;
    const file = relative(root, fileURLToPath(script.url));
    if (/^(\.\.|node_modules|conformance|scripts)\//.test(file) || file.includes('/node_modules/')) continue;
    if (script.functions.some((fn) => fn.ranges[0]!.count > 0)) files.add(file);
  }
  return files;
}

// Loaded after coverage started, so every function of the service is counted from its first call.
const { startService } = await import('../src/composition/start-service.ts');
const { createLogger, stdoutDestination } = await import('../src/observability/logger.ts');
const transports = {
  stdlib: async () => (await import('../src/transports/stdlib/server.ts')).stdlibTransport,
  koa: async () => (await import('../src/transports/koa/app.ts')).koaTransport,
  grpc: async () => (await import('../src/transports/grpc/grpc-transport.ts')).grpcTransport,
};
const speed = withSpeed ? (await import('../speed/ring.ts')).speedRing : undefined;
const logger = createLogger('info', speed?.stdout?.() ?? stdoutDestination());
const service = await startService({
  serviceName: `orders-${transportName}`,
  transport: await transports[transportName as keyof typeof transports](),
  env: { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0' },
  logger,
  embedded: true,
  seedDemoUsers: true,
  speed,
});
const { api } = await service.ready;

const { createDriver } = await import('../conformance/drivers/drivers.ts');
const driver = createDriver(operation === 'create' && transportName === 'grpc' ? 'grpc' : 'rest-http1', {
  baseUrl: `http://127.0.0.1:${api}`,
  adminUrl: undefined,
  hooks: undefined,
});
const auth = `Bearer ${((await driver.login({ username: 'alice', password: 'alice-password' })).body as { token: string }).token}`;
const { id } = (await driver.createOrder(auth, { item: 'widget', quantity: 1 })).body as { id: string };
const request = () => (operation === 'create' ? driver.createOrder(auth, { item: 'widget', quantity: 1 }) : driver.getOrder(auth, id));

await request();
await ranSinceLastTake();
let crossed: Set<string> | undefined;
for (let round = 0; round < 5; round++) {
  await request();
  const ran = await ranSinceLastTake();
  crossed = crossed === undefined ? ran : new Set([...crossed].filter((file) => ran.has(file)));
}
const label = `${transportName} ${operation === 'create' ? 'CreateOrder' : 'GET /orders/{id}'}${withSpeed ? ' (speed ring)' : ''}`;
process.stderr.write(`${label}: ${crossed!.size} files\n${[...crossed!].sort().join('\n')}\n`);
await Promise.all([driver.close(), service.stop()]);
session.disconnect();
