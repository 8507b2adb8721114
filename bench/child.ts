// A server child of the bench and the orchestrator's handle on it, over the IPC channel of fork():
// the parent calls `{ id, op, args }`, the child answers `{ id, value }` or `{ id, error }`; first it
// announces `{ ready }` or `{ failed }`. Children: bench/server.ts, bench/baseline-server.ts,
// bench/fastify-peer.ts.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pinProcess } from './machine.ts';
import { newSchemaName } from './real-env.ts';
import type { TransportName } from '../test/support/transports.ts';

export type { TransportName };
export type BackendName = 'fake' | 'real';

/**
 * How the orchestrator configures bench/server.ts (JSON in BENCH_SERVER_CONFIG): `listOrders` orders are
 * seeded for the list user through the repository port; a real backend gets its own schema
 * `bench_<random>`, dropped when the child stops.
 */
export function serverChildConfig(transport: TransportName, backend: BackendName, logLevel: string, listOrders: number) {
  return { transport, backend, logLevel, listOrders, schema: backend === 'real' ? newSchemaName() : undefined };
}
export type ServerChildConfig = ReturnType<typeof serverChildConfig>;

/** Command-line options of the tools that start one server child (node:util parseArgs; bench/ab.ts, bench/profile.ts). */
export const SERVER_OPTIONS = {
  transport: { type: 'string', default: 'stdlib' },
  backend: { type: 'string', default: 'real' },
  concurrency: { type: 'string', default: '32' },
  'log-level': { type: 'string', default: 'info' },
} as const;

/** bench/server.ts of the checkout at `root`, configured by `config`, on the real backends of `env`. */
export function startServer(
  root: string,
  config: ServerChildConfig,
  env: object,
  options: Partial<StartOptions> = {},
): Promise<ServerChild> {
  return ServerChild.start({
    script: join(root, 'bench/server.ts'),
    env: { ...process.env, ...env, BENCH_SERVER_CONFIG: JSON.stringify(config) },
    cwd: root,
    ...options,
  });
}

/** What the scenarios need from a ready child. */
export interface Fixtures {
  /** GET /orders/{id}: an order already in the cache, owned by the GET user. */
  readonly getOrderId: string;
  readonly getToken: string;
  /** GET /orders: a user holding `listOrders` orders. */
  readonly listToken: string;
  readonly postToken: string;
  /** POST /auth/login: a user whose hash has the production scrypt cost. */
  readonly loginBody: string;
}

export interface Ready {
  readonly port: number;
  readonly fixtures?: Fixtures;
  /** Milliseconds spent seeding (not part of any measured run). */
  readonly seedMs: number;
  /** gRPC only: the comparison servers in the same child (bench/grpc-peers), by name. */
  readonly grpcPeers?: ReadonlyArray<{ readonly name: string; readonly port: number }>;
}

export interface ProcessSample {
  /** process.cpuUsage() user + system, µs. */
  readonly cpuUs: number;
  /** Highest RSS seen by the child's own 25 ms sampler since the last reset. */
  readonly peakRssBytes: number;
  /** CLOCK_MONOTONIC in µs: the clock of .cpuprofile timestamps, to cut a profile to a measured window. */
  readonly monotonicUs: number;
}

export interface BareInsertResult {
  readonly errors: number;
  readonly elapsedMs: number;
  readonly latenciesMs: number[];
}

/** What a child can do beyond sampling itself (stop is called once); an absent hook answers with an error. */
export interface ChildHooks {
  stop(): Promise<void>;
  setLogLevel?(level: string): void;
  bareInsert?(concurrency: number, durationMs: number): Promise<BareInsertResult>;
}

type Message = { ready: Ready } | { failed: string } | { id: number; value?: unknown; error?: string };

/**
 * The child side. CPU and memory are read inside the server process itself (process.cpuUsage is per
 * process and microsecond-precise; /proc's ticks are 10 ms), so the load generator never counts.
 */
export function serveParent(hooks: ChildHooks): void {
  if (process.send === undefined) throw new Error('bench child: must be started with an IPC channel');
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 25);
  sampler.unref();
  // Once, whether the parent asks or goes away.
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= (clearInterval(sampler), hooks.stop()));
  const ops: Record<string, (...args: never[]) => unknown> = {
    sample: (resetPeak: boolean): ProcessSample => {
      const cpu = process.cpuUsage();
      const rss = process.memoryUsage.rss();
      const sample = {
        cpuUs: cpu.user + cpu.system,
        peakRssBytes: Math.max(peakRss, rss),
        monotonicUs: Number(process.hrtime.bigint() / 1000n),
      };
      if (resetPeak) peakRss = rss;
      return sample;
    },
    logLevel: (level: string) => (hooks.setLogLevel ?? fail('this child has no logger'))(level),
    bareInsert: (concurrency: number, durationMs: number) =>
      (hooks.bareInsert ?? fail('this child has no database'))(concurrency, durationMs),
    stop,
  };
  process.on('message', (raw) => {
    const { id, op, args } = raw as { id: number; op: string; args: never[] };
    Promise.resolve()
      .then(() => (ops[op] ?? fail(`unknown op ${op}`))(...args))
      .then(
        (value) => {
          process.send?.({ id, value } satisfies Message);
          if (op === 'stop') process.disconnect();
        },
        (error: unknown) => process.send?.({ id, error: error instanceof Error ? error.message : String(error) } satisfies Message),
      );
  });
  // The parent went away (crash, Ctrl-C): do not outlive it.
  process.on('disconnect', () => void stop().finally(() => process.exit(0)));
}

function fail(message: string): never {
  throw new Error(message);
}

export function announce(message: { ready: Ready } | { failed: string }): void {
  process.send?.(message);
}

export interface StartOptions {
  /** Script to run, absolute. */
  readonly script: string;
  readonly env: NodeJS.ProcessEnv;
  /** Extra node flags, e.g. --cpu-prof. */
  readonly execArgv?: readonly string[];
  readonly cwd?: string;
  /** taskset CPU list for the child (server and load generator on separate cores). */
  readonly pinCpu?: string;
}

/**
 * The orchestrator's handle on one server child. The child has its own process, so the load generator
 * never shares its event loop; its stdout (the JSON logs) goes to /dev/null, so logging costs what it
 * costs on a fast sink, and the tail of stderr is kept for failure messages.
 */
export class ServerChild {
  readonly ready: Ready;
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, (message: { value?: unknown; error?: string }) => void>();
  #nextId = 1;

  private constructor(child: ChildProcess, ready: Ready) {
    this.#child = child;
    this.ready = ready;
  }

  static async start(options: StartOptions): Promise<ServerChild> {
    const child = fork(options.script, [], {
      env: options.env,
      cwd: options.cwd,
      execArgv: [...(options.execArgv ?? [])],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    if (options.pinCpu !== undefined && child.pid !== undefined) pinProcess(child.pid, options.pinCpu);
    const stderr = { text: '' };
    child.stderr?.on('data', (chunk: Buffer) => (stderr.text = (stderr.text + chunk.toString('utf8')).slice(-4_000)));
    const ready = await new Promise<Ready>((resolve, reject) => {
      const timer = setTimeout(
        () => (child.kill('SIGKILL'), reject(new Error(`server child did not report ready within 120 s; stderr: ${stderr.text.trim()}`))),
        120_000,
      );
      child.once('message', (message: Message) => {
        clearTimeout(timer);
        if ('ready' in message) resolve(message.ready);
        else reject(new Error('failed' in message ? message.failed : 'unexpected first message'));
      });
      child.once(
        'exit',
        (code) => (
          clearTimeout(timer),
          reject(new Error(`server child exited with ${code} before it was ready; stderr: ${stderr.text.trim()}`))
        ),
      );
    });
    const handle = new ServerChild(child, ready);
    child.on('message', (message: Message) => {
      if (!('id' in message)) return;
      handle.#pending.get(message.id)?.(message);
      handle.#pending.delete(message.id);
    });
    child.on('exit', () => {
      for (const settle of handle.#pending.values()) settle({ error: `server child exited; stderr: ${stderr.text.trim()}` });
      handle.#pending.clear();
    });
    return handle;
  }

  async #call<T>(op: string, args: unknown[], timeoutMs = 60_000): Promise<T> {
    if (!this.#child.connected) throw new Error('server child is not connected');
    const id = this.#nextId++;
    const reply = await new Promise<{ value?: unknown; error?: string }>((resolve, reject) => {
      const timer = setTimeout(
        () => (this.#pending.delete(id), reject(new Error(`server child did not answer ${op} within ${timeoutMs} ms`))),
        timeoutMs,
      );
      this.#pending.set(id, (message) => (clearTimeout(timer), resolve(message)));
      this.#child.send({ id, op, args });
    });
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply.value as T;
  }

  sample(resetPeak: boolean): Promise<ProcessSample> {
    return this.#call('sample', [resetPeak]);
  }

  setLogLevel(level: string): Promise<void> {
    return this.#call('logLevel', [level]);
  }

  bareInsert(concurrency: number, durationMs: number): Promise<BareInsertResult> {
    return this.#call('bareInsert', [concurrency, durationMs], durationMs + 60_000);
  }

  /** Graceful stop (the child drops its bench schema on the way out); SIGKILL if it hangs. */
  async stop(timeoutMs = 30_000): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    await this.#call('stop', [], timeoutMs).catch(() => this.#child.kill('SIGKILL'));
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
