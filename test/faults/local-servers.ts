import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { connect, createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Private redis-server / nats-server processes on spare loopback ports, so fault tests can kill and
 * restart a backend without touching the shared servers on 6379 / 4222.
 */
export interface LocalServer {
  readonly name: string;
  readonly port: number;
  /** Starts the process (again) on the same port; resolves once the port accepts connections. */
  start(): Promise<void>;
  /** SIGKILL to the whole process group, like a crash; resolves once the process has exited. */
  kill(): Promise<void>;
  /** Teardown: kill if running. Safe to call twice. */
  stop(): Promise<void>;
  /** The last lines the server wrote, for a failing test's message. */
  output(): string;
}

const SEARCH_DIRS = ['/usr/bin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin'];

/** Absolute path of a binary, looking in PATH and the sbin directories PATH often lacks. */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), ...SEARCH_DIRS].filter((d) => d !== '');
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

/** A port the OS just handed out on loopback; free again once this resolves. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('freePort: no port assigned');
  return address.port;
}

export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`port ${port} did not accept connections within ${timeoutMs} ms`);
    await sleep(20);
  }
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  // Last resort if a test run dies before its teardown: never leave servers behind.
  for (const child of running) killGroup(child);
});

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

async function startLocalServer(name: string, binary: string, args: (port: number) => string[], port?: number): Promise<LocalServer> {
  const chosenPort = port ?? (await freePort());
  let child: ChildProcess | undefined;
  let log = '';

  const kill = async (): Promise<void> => {
    const current = child;
    child = undefined;
    if (current === undefined) return;
    const exited = current.exitCode !== null || current.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => current.once('exit', () => resolve()));
    killGroup(current);
    await exited;
    running.delete(current);
  };

  const server: LocalServer = {
    name,
    port: chosenPort,
    async start() {
      if (child !== undefined) throw new Error(`${name} is already running`);
      // detached: its own process group, so kill() takes any helper processes with it.
      const spawned = spawn(binary, args(chosenPort), { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      child = spawned;
      running.add(spawned);
      const append = (chunk: Buffer): void => {
        log = (log + chunk.toString()).slice(-4_000);
      };
      spawned.stdout?.on('data', append);
      spawned.stderr?.on('data', append);
      const early = new Promise<never>((_, reject) => {
        spawned.once('exit', (code, signal) => reject(new Error(`${name} exited early (${code ?? signal}): ${log}`)));
        spawned.once('error', reject);
      });
      early.catch(() => undefined);
      await Promise.race([waitForPort(chosenPort), early]);
    },
    kill,
    stop: kill,
    output: () => log,
  };
  await server.start();
  return server;
}

export async function startRedisServer(port?: number): Promise<LocalServer> {
  const binary = findBinary('redis-server');
  if (binary === undefined) throw new Error('redis-server not found');
  return startLocalServer('redis-server', binary, (p) => ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], port);
}

export async function startNatsServer(port?: number): Promise<LocalServer> {
  const binary = findBinary('nats-server');
  if (binary === undefined) throw new Error('nats-server not found');
  return startLocalServer('nats-server', binary, (p) => ['-a', '127.0.0.1', '-p', String(p)], port);
}
