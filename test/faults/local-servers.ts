import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { freePort, waitForPort } from '../support/ports.ts';
import { delimiter, join } from 'node:path';

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
  /** SIGSTOP: the process keeps its sockets but answers nothing (a stalled server). */
  pause(): void;
  /** SIGCONT after pause. */
  resume(): void;
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

function signalGroup(child: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (child?.pid === undefined) throw new Error(`cannot send ${signal}: not running`);
  process.kill(-child.pid, signal);
}

async function startLocalServer(
  name: string,
  binary: string,
  args: (port: number) => string[],
  port?: number,
  onStop?: () => void,
): Promise<LocalServer> {
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
    pause: () => signalGroup(child, 'SIGSTOP'),
    resume: () => signalGroup(child, 'SIGCONT'),
    stop: async () => {
      await kill();
      onStop?.();
    },
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

/**
 * With JetStream (issue 13): its store lives in a temp directory that survives kill()/start() (a
 * crash keeps what was written, like a real disk) and is removed by stop().
 */
export async function startNatsServer(port?: number): Promise<LocalServer> {
  const binary = findBinary('nats-server');
  if (binary === undefined) throw new Error('nats-server not found');
  const storeDir = mkdtempSync(join(tmpdir(), 'orders-nats-'));
  return startLocalServer(
    'nats-server',
    binary,
    (p) => ['-a', '127.0.0.1', '-p', String(p), '-js', '-sd', storeDir],
    port,
    () => rmSync(storeDir, { recursive: true, force: true }),
  );
}
