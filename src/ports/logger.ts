/**
 * What the core and the adapters may do with a logger: write one structured line at a level (spec 4.5).
 * The pino adapter (observability/logger.ts) satisfies it; nothing here knows pino, so a test can hand
 * in any recorder and the core cannot reach for transports, child loggers or flushing.
 */
export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(fields: LogFields, msg: string): void;
  info(fields: LogFields, msg: string): void;
  warn(fields: LogFields, msg: string): void;
  error(fields: LogFields, msg: string): void;
}
