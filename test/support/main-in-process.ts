import { EventEmitter } from 'node:events';
import type { Env } from '../../src/config/env.ts';
import type { SignalSource } from '../../src/lifecycle/stop-signals.ts';
import { runMain } from '../../src/composition/main.ts';
import { until } from './eventually.ts';
import type { Transport } from './transports.ts';

/** A run of an executable's main in this process, as bin/<transport>.ts runs it in its own. */
export interface MainRun {
  /** What runMain returns: the executable's exit code (0 after a stop signal, 1 start-up failed, 2 bad arguments). */
  readonly code: Promise<number>;
  /** Its stdout as parsed JSON log lines (a line that is not JSON is kept as `{msg: '<not json>', raw}`). */
  readonly lines: Record<string, unknown>[];
  /** Its stdout and stderr as written. */
  output(): string;
  /** Sends a stop signal, as an orchestrator does to the process. */
  signal(name: 'SIGTERM' | 'SIGINT'): void;
  /** Resolves with the first line that matches, once it is logged. */
  line(predicate: (line: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>>;
}

/**
 * Runs `runMain` for `transport` with stand-ins for the process's stdout, stderr, stop signals and exit
 * (MainOptions.io): what the executable logs, returns and does on a signal, without starting a Node
 * process for it (about half a second of CPU each). What only a process shows (the bin file sets the
 * exit code, a real signal reaches the handlers) is the spawned cases' (executable-serves-then-stops-on-sigterm).
 */
export function runMainInProcess(transport: Transport, argv: readonly string[], env: Env): MainRun {
  const lines: Record<string, unknown>[] = [];
  let written = '';
  const signals = new EventEmitter();
  const stdout = {
    write(text: string): void {
      written += text;
      for (const part of text.split('\n').filter((t) => t.trim() !== '')) {
        try {
          lines.push(JSON.parse(part) as Record<string, unknown>);
        } catch {
          lines.push({ msg: '<not json>', raw: part });
        }
      }
    },
    flush(callback?: (error?: Error) => void): void {
      callback?.();
    },
  };
  const code = runMain({
    serviceName: `orders-${transport.name}`,
    transport: transport.factory,
    argv,
    env,
    io: {
      stdout: () => stdout,
      stderr: { write: (text: string) => (written += text) },
      signals: signals as unknown as SignalSource,
      exit: () => undefined,
    },
  });
  return {
    code,
    lines,
    output: () => written,
    signal: (name) => void signals.emit(name, name),
    async line(predicate, what) {
      await until(() => lines.some(predicate), what);
      return lines.find(predicate)!;
    },
  };
}
