// The real executable, spawned as operators run it (spec 3.4, 4.5, 8.1): start-up failures, signals,
// the shutdown flush of sessions, and that no secret reaches the log.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(ROOT, 'bin', 'orders-stdlib.ts');
const JWT_SECRET = 'process-test-secret-0123456789-abcdefghijklmnop';
const DEMO_PASSWORDS = ['alice-password', 'bob-password'];
const BANNER_PREFIX = 'embedded mode: in-memory backends';
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

interface LogLine {
  readonly time: string;
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

interface Service {
  readonly child: ChildProcess;
  /** Every stdout line as written. */
  readonly raw: string[];
  readonly lines: LogLine[];
  stderr: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The first line whose msg equals `msg`, or that `msg` accepts, once it is written. */
  waitFor(msg: string | ((line: LogLine) => boolean), timeoutMs?: number): Promise<LogLine>;
}

const running: Service[] = [];
afterEach(async () => {
  for (const service of running.splice(0)) {
    if (service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
  }
});

/**
 * Spawns the executable with exactly `env` (plus PATH with this Node first): nothing from the test
 * process leaks in, so a POSTGRES_DSN set for other suites cannot make a "missing variable" case pass.
 */
function spawnService(args: string[], env: Record<string, string>): Service {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const raw: string[] = [];
  const lines: LogLine[] = [];
  const waiters: { accepts: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];
  let pending = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const text of parts) {
      if (text.trim() === '') continue;
      raw.push(text);
      const line = JSON.parse(text) as LogLine; // spec 4.5: every stdout line is JSON
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.accepts(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const service: Service = {
    child,
    raw,
    lines,
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))).then(async (result) => {
      // 'exit' can come before the last stdout data; 'close' means the pipes are drained.
      if (child.stdout!.readable) await once(child, 'close');
      return result as { code: number | null; signal: NodeJS.Signals | null };
    }),
    waitFor(msg, timeoutMs = 15_000) {
      const accepts = typeof msg === 'string' ? (line: LogLine) => line.msg === msg : msg;
      const seen = lines.find(accepts);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no log line ${String(msg)} within ${timeoutMs} ms; got:\n${raw.join('\n')}\n${service.stderr}`)), timeoutMs);
        const waiter = {
          accepts,
          resolve: (line: LogLine) => {
            clearTimeout(timer);
            resolve(line);
          },
        };
        waiters.push(waiter);
        void service.exited.then(() => {
          if (waiters.includes(waiter)) {
            clearTimeout(timer);
            reject(new Error(`exited before logging ${String(msg)}:\n${raw.join('\n')}\n${service.stderr}`));
          }
        });
      });
    },
  };
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (service.stderr += chunk));
  running.push(service);
  return service;
}

/** A port that was free a moment ago (bind to it and release it). */
async function sparePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function occupiedPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, server };
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function portOf(line: LogLine): number {
  return Number(String(line['addr']).split(':').pop());
}

async function call(port: number, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Every line is JSON with time (ISO 8601), level and msg (spec 4.5). */
function expectWellFormed(service: Service): void {
  expect(service.lines.length).toBeGreaterThan(0);
  for (const line of service.lines) {
    expect(typeof line.msg).toBe('string');
    expect(['debug', 'info', 'warn', 'error']).toContain(line.level);
    expect(line.time).toMatch(ISO_8601);
    expect(new Date(line.time).toISOString()).toBe(line.time);
  }
}

/** No secret in any output line; the demo passwords only in the embedded banner. */
function expectNoSecrets(service: Service, secrets: Record<string, string>): void {
  const output = [...service.raw, ...service.stderr.split('\n')];
  for (const [what, secret] of Object.entries(secrets)) {
    for (const text of output) expect(text.includes(secret), `${what} leaked in: ${text}`).toBe(false);
  }
  for (const text of output.filter((t) => !t.includes(BANNER_PREFIX))) {
    for (const password of DEMO_PASSWORDS) expect(text.includes(password), `demo password outside the banner: ${text}`).toBe(false);
  }
}

/** Login as alice, create an order and view it: the session then has one view to flush. */
async function viewAnOrder(port: number): Promise<{ token: string; userId: string; orderId: string }> {
  const login = await call(port, 'POST', '/auth/login', undefined, { username: 'alice', password: 'alice-password' });
  expect(login.status).toBe(200);
  const token = String(login.body['token']);
  const userId = String((JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string }).sub);
  const created = await call(port, 'POST', '/orders', token, { item: 'book', quantity: 2 });
  expect(created.status).toBe(201);
  const orderId = String(created.body['id']);
  expect((await call(port, 'GET', `/orders/${orderId}`, token)).status).toBe(200);
  return { token, userId, orderId };
}

describe('orders-stdlib process (spec 3.4, 8.1)', () => {
  it('without --embedded and without POSTGRES_DSN: exit 1 naming the variable, before any listener is bound', async () => {
    const [httpPort, adminPort] = [await sparePort(), await sparePort()];
    const service = spawnService([], { JWT_SECRET, HTTP_ADDR: `127.0.0.1:${httpPort}`, ADMIN_ADDR: `127.0.0.1:${adminPort}` });
    const { code } = await service.exited;
    expect(code).toBe(1);
    const failure = service.lines.find((l) => l.level === 'error');
    expect(failure).toMatchObject({ msg: 'start-up failed: configuration' });
    expect(String(failure!['err'])).toContain('POSTGRES_DSN');
    expect(service.lines.some((l) => l.msg === 'api: listening')).toBe(false);
    expect(await isListening(httpPort)).toBe(false);
    expect(await isListening(adminPort)).toBe(false);
    expectWellFormed(service);
    expectNoSecrets(service, { JWT_SECRET });
  });

  it.each([
    ['JWT_SECRET', { POSTGRES_DSN: 'postgres://orders:dsn-pass-never-logged@127.0.0.1:1/db', REDIS_ADDR: '127.0.0.1:1', NATS_URL: 'nats://127.0.0.1:1' }],
    ['REDIS_ADDR', { JWT_SECRET, POSTGRES_DSN: 'postgres://orders:dsn-pass-never-logged@127.0.0.1:1/db', NATS_URL: 'nats://127.0.0.1:1' }],
    ['NATS_URL', { JWT_SECRET, POSTGRES_DSN: 'postgres://orders:dsn-pass-never-logged@127.0.0.1:1/db', REDIS_ADDR: '127.0.0.1:1' }],
  ])('without --embedded and without %s: exit 1 naming it, no listener, no secret in the output', async (variable, env: Record<string, string>) => {
    const httpPort = await sparePort();
    const service = spawnService([], { ...env, HTTP_ADDR: `127.0.0.1:${httpPort}`, ADMIN_ADDR: '127.0.0.1:0' });
    expect((await service.exited).code).toBe(1);
    const failure = service.lines.find((l) => l.msg === 'start-up failed: configuration');
    expect(String(failure?.['err'])).toContain(variable);
    expect(service.lines.some((l) => l.msg === 'api: listening')).toBe(false);
    expect(await isListening(httpPort)).toBe(false);
    expectNoSecrets(service, { 'DSN password': 'dsn-pass-never-logged', ...(env['JWT_SECRET'] ? { JWT_SECRET } : {}) });
  });

  it('with every variable but unreachable backends: init fails, exit 1, nothing listens (spec 3.4 rule 2)', async () => {
    const httpPort = await sparePort();
    const service = spawnService([], {
      JWT_SECRET,
      POSTGRES_DSN: 'postgres://orders:dsn-pass-never-logged@127.0.0.1:1/db',
      REDIS_ADDR: '127.0.0.1:1',
      NATS_URL: 'nats://127.0.0.1:1',
      HTTP_ADDR: `127.0.0.1:${httpPort}`,
      ADMIN_ADDR: '127.0.0.1:0',
    });
    expect((await service.exited).code).toBe(1);
    expect(service.lines.some((l) => l.msg === 'start-up failed')).toBe(true);
    expect(service.lines.some((l) => l.msg === 'api: listening')).toBe(false);
    expect(await isListening(httpPort)).toBe(false);
    expectWellFormed(service);
    expectNoSecrets(service, { 'DSN password': 'dsn-pass-never-logged', JWT_SECRET });
  });

  it('--embedded: listens, prints the demo logins, answers; SIGTERM flushes the session, logs `stopped` and exits 0', async () => {
    const service = spawnService(['--embedded'], { JWT_SECRET, HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'debug' });
    const listening = await service.waitFor('api: listening');
    const port = portOf(listening);
    expect(await isListening(port)).toBe(true);
    const banner = await service.waitFor((l) => l.msg.startsWith(BANNER_PREFIX));
    expect(banner.msg).toContain('alice / alice-password');
    expect(banner.msg).toContain('bob / bob-password');
    // A given JWT_SECRET is used: no "random secret" warning.
    expect(service.lines.some((l) => l.msg.includes('JWT_SECRET is not set'))).toBe(false);

    const { token, userId, orderId } = await viewAnOrder(port);
    const wrong = await call(port, 'POST', '/auth/login', undefined, { username: 'alice', password: 'not-the-right-password' });
    expect(wrong).toEqual({ status: 401, body: { error: 'invalid credentials' } });

    const signalled = performance.now();
    service.child.kill('SIGTERM');
    const { code, signal } = await service.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(performance.now() - signalled).toBeLessThan(5_000);

    expect(service.lines.find((l) => l.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM' });
    // Shutdown flush (spec 3.2): the lingering session of alice is closed with its state.
    expect(service.lines.filter((l) => l.msg === 'session: closed')).toEqual([
      expect.objectContaining({ level: 'info', user: userId, views: 1, recent: [orderId] }),
    ]);
    const messages = service.lines.map((l) => l.msg);
    expect(messages.at(-1)).toBe('stopped');
    expect(messages.indexOf('session: closed')).toBeLessThan(messages.indexOf('stopped'));
    expect(await isListening(port)).toBe(false);
    expectWellFormed(service);
    expectNoSecrets(service, { JWT_SECRET, token, 'wrong password': 'not-the-right-password' });
  });

  it('--embedded: SIGINT shuts down the same way', async () => {
    const service = spawnService(['--embedded'], { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0' });
    const port = portOf(await service.waitFor('api: listening'));
    // No JWT_SECRET in embedded mode: a random one, announced without its value.
    expect(service.lines.find((l) => l.msg.includes('JWT_SECRET is not set'))?.level).toBe('warn');
    const { token, userId, orderId } = await viewAnOrder(port);
    const signalled = performance.now();
    service.child.kill('SIGINT');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(performance.now() - signalled).toBeLessThan(5_000);
    expect(service.lines.find((l) => l.msg === 'shutting down')).toMatchObject({ signal: 'SIGINT' });
    expect(service.lines.find((l) => l.msg === 'session: closed')).toMatchObject({ user: userId, views: 1, recent: [orderId] });
    expect(service.lines.at(-1)?.msg).toBe('stopped');
    expectWellFormed(service);
    expectNoSecrets(service, { token });
  });

  it('JWT_SECRET shorter than 32 bytes: exit 1 naming JWT_SECRET, never printing it', async () => {
    const shortSecret = 'short-secret-xyz';
    const httpPort = await sparePort();
    const service = spawnService(['--embedded'], { JWT_SECRET: shortSecret, HTTP_ADDR: `127.0.0.1:${httpPort}`, ADMIN_ADDR: '127.0.0.1:0' });
    expect((await service.exited).code).toBe(1);
    const failure = service.lines.find((l) => l.level === 'error');
    expect(String(failure?.['err'])).toContain('JWT_SECRET');
    expect(service.lines.some((l) => l.msg === 'api: listening')).toBe(false);
    expect(await isListening(httpPort)).toBe(false);
    expectNoSecrets(service, { JWT_SECRET: shortSecret });
  });

  it('a bad LOG_LEVEL still starts, at info (no debug lines)', async () => {
    const service = spawnService(['--embedded'], { JWT_SECRET, HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'verbose' });
    const port = portOf(await service.waitFor('api: listening'));
    await viewAnOrder(port);
    service.child.kill('SIGTERM');
    expect((await service.exited).code).toBe(0);
    expect(service.lines.some((l) => l.msg === 'request' && l.level === 'info')).toBe(true);
    expect(service.lines.every((l) => l.level !== 'debug')).toBe(true);
    expectWellFormed(service);
  });

  it('LOG_LEVEL=error hides info lines but still logs a start-up failure', async () => {
    const { port, server } = await occupiedPort();
    try {
      const service = spawnService(['--embedded'], { JWT_SECRET, HTTP_ADDR: `127.0.0.1:${port}`, ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'error' });
      expect((await service.exited).code).toBe(1);
      expect(service.lines.length).toBeGreaterThan(0);
      expect(service.lines.every((l) => l.level === 'error')).toBe(true);
      expect(service.lines.at(-1)).toMatchObject({ msg: 'start-up failed', err: expect.stringMatching(/^api: listen: /) });
    } finally {
      server.close();
    }
  });

  it('HTTP_ADDR port in use: exit 1 with `api: listen:` in the log', async () => {
    const { port, server } = await occupiedPort();
    try {
      const service = spawnService(['--embedded'], { JWT_SECRET, HTTP_ADDR: `127.0.0.1:${port}`, ADMIN_ADDR: '127.0.0.1:0' });
      const { code } = await service.exited;
      expect(code).toBe(1);
      const failure = service.lines.find((l) => l.level === 'error' && String(l['err']).startsWith('api: listen:'));
      expect(failure, service.raw.join('\n')).toBeDefined();
      expect(service.lines.some((l) => l.msg === 'api: listening')).toBe(false);
      expectWellFormed(service);
      expectNoSecrets(service, { JWT_SECRET });
    } finally {
      server.close();
    }
  });

  it('an unknown argument: exit 2 with the usage on stderr', async () => {
    const service = spawnService(['--bogus'], { JWT_SECRET });
    expect((await service.exited).code).toBe(2);
    expect(service.stderr).toContain('usage: orders-stdlib [--embedded]');
    expect(service.raw).toEqual([]);
  });
});
