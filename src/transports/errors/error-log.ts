import type { Logger } from '../../ports/logger.ts';
import { PANIC_LOG_LINE } from './error-table.ts';

/** Expected failures the operator must hear of (MappedError.logAs): the error's own (secret-free) text. */
export function logMappedFailure(logger: Logger, message: string, error: unknown, path: string): void {
  logger.error({ err: error instanceof Error ? error.message : String(error), path }, message);
}

/** Spec 4.3 rule 1, on every transport: anything the error table does not know (gRPC's path is the method). */
export function logPanic(logger: Logger, error: unknown, path: string): void {
  logger.error({ panic: error instanceof Error ? error.message : String(error), path }, PANIC_LOG_LINE);
}
