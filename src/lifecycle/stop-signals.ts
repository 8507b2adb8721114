import { constants } from 'node:os';
import type { Logger } from '../ports/logger.ts';

/** The signals that stop the service gracefully (spec 3.4 rule 4). */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** What listens for signals: `process` in the executables, an EventEmitter in tests. */
export interface SignalSource {
  on(signal: StopSignal, listener: (signal: StopSignal) => void): unknown;
  off(signal: StopSignal, listener: (signal: StopSignal) => void): unknown;
}

export interface StopSignalOptions {
  readonly source: SignalSource;
  readonly logger: Logger;
  /** Called once, on the first stop signal: starts the graceful stop. */
  readonly onStop: (signal: StopSignal) => void;
  /** Called on the third stop signal: ends the process now, with this code (`process.exit`). */
  readonly exit: (code: number) => void;
}

/**
 * Rule LIFE-4-shutdown, chosen: one stop signal, one graceful stop, whoever sends it and however often.
 * - The first SIGINT/SIGTERM starts the stop (`shutting down`).
 * - The second is logged (`shutdown in progress: signal ignored`) and changes nothing: the drain is bounded
 *   (READY-cancel: 5 s at most, then what is left is cut), so the stop ends on its own. A terminal's Ctrl-C
 *   and a supervisor may both deliver the same intent (a process group signal plus a forwarded copy); a
 *   duplicate must not cut in-flight work short.
 * - The third ends the process at once (`shutdown forced`), exit code 128 + the signal's number (130 for
 *   SIGINT, 143 for SIGTERM, as a shell reports a process killed by that signal): three signals are a
 *   person who means it, not a duplicate.
 * The listeners stay installed until the process exits: a signal arriving between `stopped` and the exit
 * must not kill the process by Node's default action and turn a clean exit 0 into a signal death.
 * Returns the detach function (tests).
 */
export function handleStopSignals(options: StopSignalOptions): () => void {
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
