import { fork, type ChildProcess } from 'node:child_process';
import type { BackendName, BareInsertResult, ChildMessage, ChildReply, LogLevelName, ParentRequest, ProcessSample, ReadyMessage, ServerChildConfig, TransportName } from './ipc-protocol.ts';
import { pinProcess } from './pinning.ts';
import { newSchemaName } from './real-env.ts';

export interface StartOptions {
  /** Script to run (bench/server.ts or bench/baseline-server.ts), absolute. */
  readonly script: string;
  readonly env: NodeJS.ProcessEnv;
  /** Extra node flags, e.g. --cpu-prof. */
  readonly execArgv?: readonly string[];
  readonly cwd?: string;
  readonly startTimeoutMs?: number;
  /** taskset CPU list for the child (issue 16: server and load generator on separate cores). */
  readonly pinCpu?: string;
}

type Distribute<T> = T extends unknown ? Omit<T, 'id'> : never;
type RequestBody = Distribute<ParentRequest>;

const STDERR_KEEP = 4_000;

/**
 * The orchestrator's handle on one server child. The child has its own process, so the load
 * generator never shares its event loop; its stdout (the JSON logs) goes to /dev/null, so logging costs
 * what it costs on a fast sink, and stderr is kept for failure messages.
 */
export class ServerChild {
  readonly ready: ReadyMessage;
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, (reply: ChildReply) => void>();
  #nextId = 1;
  #stderr = '';

  private constructor(child: ChildProcess, ready: ReadyMessage) {
    this.#child = child;
    this.ready = ready;
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  static async start(options: StartOptions): Promise<ServerChild> {
    const child = fork(options.script, [], {
      env: options.env,
      cwd: options.cwd,
      execArgv: [...(options.execArgv ?? [])],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    if (options.pinCpu !== undefined && child.pid !== undefined) pinProcess(child.pid, options.pinCpu);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    const ready = await new Promise<ReadyMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`server child did not report ready within ${options.startTimeoutMs ?? 120_000} ms; stderr: ${stderr.trim()}`));
      }, options.startTimeoutMs ?? 120_000);
      const onMessage = (message: ChildMessage): void => {
        if (message.type === 'ready' || message.type === 'failed') {
          clearTimeout(timer);
          child.off('message', onMessage);
          child.off('exit', onExit);
          if (message.type === 'ready') resolve(message);
          else reject(new Error(message.error));
        }
      };
      const onExit = (code: number | null): void => {
        clearTimeout(timer);
        reject(new Error(`server child exited with ${code} before it was ready; stderr: ${stderr.trim()}`));
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
    const handle = new ServerChild(child, ready);
    handle.#stderr = stderr;
    child.stderr?.on('data', (chunk: Buffer) => {
      handle.#stderr = (handle.#stderr + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready' || message.type === 'failed') return;
      const resolve = handle.#pending.get(message.id);
      handle.#pending.delete(message.id);
      resolve?.(message);
    });
    child.on('exit', () => {
      for (const [id, resolve] of handle.#pending) resolve({ id, type: 'error', error: `server child exited; stderr: ${handle.#stderr.trim()}` });
      handle.#pending.clear();
    });
    return handle;
  }

  async #request(body: RequestBody, timeoutMs = 60_000): Promise<ChildReply> {
    const id = this.#nextId++;
    const reply = await new Promise<ChildReply>((resolve, reject) => {
      if (!this.#child.connected) {
        reject(new Error('server child is not connected'));
        return;
      }
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`server child did not answer ${body.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
      this.#child.send({ ...body, id } as ParentRequest);
    });
    if (reply.type === 'error') throw new Error(reply.error);
    return reply;
  }

  async sample(resetPeak: boolean): Promise<ProcessSample> {
    const reply = await this.#request({ type: 'sample', resetPeak });
    if (reply.type !== 'sample') throw new Error(`unexpected reply ${reply.type}`);
    return reply.sample;
  }

  async setLogLevel(level: LogLevelName): Promise<void> {
    await this.#request({ type: 'log-level', level });
  }

  async bareInsert(concurrency: number, durationMs: number, maxCount: number): Promise<BareInsertResult> {
    const reply = await this.#request({ type: 'bare-insert', concurrency, durationMs, maxCount }, durationMs + 60_000);
    if (reply.type !== 'bare-insert') throw new Error(`unexpected reply ${reply.type}`);
    return reply.result;
  }

  /** Graceful stop (the child drops its bench schema on the way out); SIGKILL if it hangs. */
  async stop(timeoutMs = 30_000): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    try {
      await this.#request({ type: 'stop' }, timeoutMs);
    } catch {
      this.#child.kill('SIGKILL');
    }
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }

  stderrTail(): string {
    return this.#stderr.trim();
  }
}

/** Command-line options every bench tool that starts a server child takes (node:util parseArgs). */
export const SERVER_OPTIONS = {
  transport: { type: 'string', default: 'stdlib' },
  backend: { type: 'string', default: 'real' },
  concurrency: { type: 'string', default: '32' },
  'log-level': { type: 'string', default: 'info' },
} as const;

/** A child's configuration; a real backend gets its own schema `bench_<random>`. */
export function serverChildConfig(transport: string, backend: string, logLevel: string, listOrders: number): ServerChildConfig {
  const schema = backend === 'real' ? newSchemaName() : undefined;
  return { transport: transport as TransportName, backend: backend as BackendName, logLevel: logLevel as ServerChildConfig['logLevel'], listOrders, schema, uniqueSuffix: schema?.replace(/^bench_/, 'bench') };
}
