/**
 * The service's logger (spec 4.5): JSON lines on stdout with keys time (ISO 8601), level (label) and msg, the
 * process default (rule LOG-default), written in batches (rule LOG-turn-batched).
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import { traceLogFields } from './request-trace.ts';

export type { Logger } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Spec 4.5: debug, warn and error select themselves; anything else (info included) selects info. */
export function parseLogLevel(value: string | undefined): LogLevel {
  return value === 'debug' || value === 'warn' || value === 'error' ? value : 'info';
}

let processDefault: Logger | undefined;

/** Building it installs it as the process default (defaultLogger), which Node's process warnings go through. */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const logger = pino(
    {
      level,
      messageKey: 'msg',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Call sites log explicit fields, never whole objects (rule LOG-explicit-fields). Belt and braces,
      // top-level keys only: a wildcard path made pino walk every logged object (15.5% of a GET, bench/profile.ts).
      redact: { paths: ['password', 'token', 'authorization', 'JWT_SECRET'], censor: '[redacted]' },
      // trace_id and span_id on every line logged inside a request scope (rule TRACE-log-ids).
      mixin: traceLogFields,
    },
    destination ?? stdoutDestination(),
  );
  if (processDefault === undefined) {
    process.on('warning', (warning) => defaultLogger().warn({ warning: warning.message, name: warning.name }, 'process warning'));
  }
  processDefault = logger;
  return logger;
}

/** Our choices (rule LOG-turn-batched): how long a line may wait, and how much may wait at once. */
export const LOG_BATCH = { flushEveryMs: 10, minBytes: 64 * 1024 } as const;

/**
 * The process's stdout through pino's sonic-boom, asynchronous and in batches (rule LOG-turn-batched): each
 * line handed to the thread pool on its own was ~17% of a cache-hit GET's CPU (bench/ab.ts). pino registers
 * the stream for exit, so what is held is still written on a crash or process.exit(); only SIGKILL loses lines.
 */
export function stdoutDestination(): DestinationStream {
  return pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_BATCH.minBytes,
    maxWrite: 4 * LOG_BATCH.minBytes,
    periodicFlush: LOG_BATCH.flushEveryMs,
  });
}

/** The process-wide default for code that is handed no logger (libraries, last-resort handlers). */
export function defaultLogger(): Logger {
  processDefault ??= pino({ enabled: false });
  return processDefault;
}
