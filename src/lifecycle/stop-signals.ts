/**
 * Rule LIFE-4-shutdown: one stop signal, one graceful stop, whoever sends it and however often. The first
 * SIGINT/SIGTERM starts the stop; the second is logged and changes nothing (a terminal's Ctrl-C and a
 * supervisor may both deliver the same intent, and the drain is bounded, rule READY-cancel); the third ends
 * the process at once with 128 + the signal's number, as a shell reports a process killed by it. The
 * listeners stay until the process exits: a late signal must not turn a clean exit into a signal death.
 */
import { constants } from 'node:os';
import type { Logger } from '../ports/logger.ts';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** What listens for signals: `process` in the executables, an EventEmitter in tests. */
export interface SignalSource {
  on(signal: StopSignal, listener: (signal: StopSignal) => void): unknown;
  off(signal: StopSignal, listener: (signal: StopSignal) => void): unknown;
}

/** Installs the listeners; `onStop` starts the graceful stop, `exit` is `process.exit`. Returns the detach (tests). */
export function handleStopSignals(options: {
  readonly source: SignalSource;
  readonly logger: Logger;
  readonly onStop: (signal: StopSignal) => void;
  readonly exit: (code: number) => void;
}): () => void {
  const { source, logger } = options;
  let received = 0;
  const listener = (signal: StopSignal): void => {
    received += 1;
    if (received === 1) {
      logger.info({ signal }, 'shutting down');
      options.onStop(signal);
    } else if (received === 2) {
      logger.warn({ signal }, 'shutdown in progress: signal ignored (the drain is bounded; a third signal stops at once)');
    } else if (received === 3) {
      const code = 128 + constants.signals[signal];
      logger.error({ signal, code }, 'shutdown forced: third stop signal, exiting without waiting for the drain');
      options.exit(code);
    }
  };
  for (const signal of STOP_SIGNALS) source.on(signal, listener);
  return () => {
    for (const signal of STOP_SIGNALS) source.off(signal, listener);
  };
}
