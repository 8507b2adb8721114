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
  /** Starts the process (again) on the same port; resolves once it serves (see ServerSpec.ready). */
  start(): Promise<void>;
  /** `signal` (SIGKILL: a crash) to the server; resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGSTOP: the process keeps its sockets but answers nothing (a stalled server). */
  pause(): void;
  /** SIGCONT after pause. */
  resume(): void;
  /** Teardown: kill if running, then the spec's onStop. Safe to call twice. */
  stop(): Promise<void>;
}

/** How to run one kind of server. */
export interface ServerSpec {
  readonly name: string;
  /** The command and its arguments for a port. */
  readonly command: (port: number) => readonly [string, string[]];
  readonly port?: number;
  /** Resolves once the server serves; `exited` rejects if the process dies first. Default: the port accepts connections. */
  readonly ready?: (port: number, exited: Promise<never>) => Promise<void>;
  /** Delivers a signal to the running server. Default: its whole process group. */
  readonly signal?: (child: ChildProcess, signal: NodeJS.Signals) => void;
  readonly onStop?: () => void;
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

export async function startLocalServer(spec: ServerSpec): Promise<LocalServer> {
  const { name } = spec;
  const chosenPort = spec.port ?? (await freePort());
  const signal = spec.signal ?? ((child: ChildProcess, sig: NodeJS.Signals) => signalGroup(child, sig));
  let child: ChildProcess | undefined;
  let log = '';

  const kill = async (sig: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const current = child;
    child = undefined;
    if (current === undefined) return;
    const exited =
      current.exitCode !== null || current.signalCode !== null
        ? Promise.resolve()
        : new Promise<void>((resolve) => current.once('exit', () => resolve()));
    try {
      signal(current, sig);
    } catch {
      killGroup(current);
    }
    await exited;
    running.delete(current);
  };

  const server: LocalServer = {
    name,
    port: chosenPort,
    async start() {
      if (child !== undefined) throw new Error(`${name} is already running`);
      const [command, args] = spec.command(chosenPort);
      // detached: its own process group, so kill() takes any helper processes with it.
      const spawned = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      child = spawned;
      running.add(spawned);
      const append = (chunk: Buffer): void => {
        log = (log + chunk.toString()).slice(-4_000);
      };
      spawned.stdout?.on('data', append);
      spawned.stderr?.on('data', append);
      const early = new Promise<never>((_, reject) => {
        spawned.once('exit', (code, sig) => reject(new Error(`${name} exited early (${code ?? sig}): ${log}`)));
        spawned.once('error', reject);
      });
      early.catch(() => undefined);
      await (spec.ready ?? ((port, exited) => Promise.race([waitForPort(port), exited])))(chosenPort, early);
    },
    kill,
    pause: () => signalGroup(child, 'SIGSTOP'),
    resume: () => signalGroup(child, 'SIGCONT'),
    stop: async () => {
      await kill();
      spec.onStop?.();
    },
  };
  await server.start().catch(async (error: unknown) => {
    await kill();
    throw error;
  });
  return server;
}

export async function startRedisServer(): Promise<LocalServer> {
  const binary = findBinary('redis-server');
  if (binary === undefined) throw new Error('redis-server not found');
  return startLocalServer({
    name: 'redis-server',
    command: (p) => [binary, ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']],
  });
}

/**
 * With JetStream: its store lives in a temp directory that survives kill()/start() (a
 * crash keeps what was written, like a real disk) and is removed by stop().
 */
export async function startNatsServer(): Promise<LocalServer> {
  const binary = findBinary('nats-server');
  if (binary === undefined) throw new Error('nats-server not found');
  const storeDir = mkdtempSync(join(tmpdir(), 'orders-nats-'));
  return startLocalServer({
    name: 'nats-server',
    command: (p) => [binary, ['-a', '127.0.0.1', '-p', String(p), '-js', '-sd', storeDir]],
    onStop: () => rmSync(storeDir, { recursive: true, force: true }),
  });
}
