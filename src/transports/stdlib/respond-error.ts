import type { Logger } from '../../ports/logger.ts';
import { logMappedFailure, toHttpError } from '../errors/table.ts';
import { sendError, type Exchange } from './exchange.ts';

/**
 * Writes the error table's answer. An unexpected error is rethrown after answering so the recovery
 * layer logs it once; expected ones (4xx, 503 session) are not logged here (koa's rule: log only the
 * unexpected), except those the table marks for the operator (backend outages).
 */
export function respondWithError(exchange: Exchange, error: unknown, logger: Logger): void {
  const mapped = toHttpError(error);
  if (!mapped.expected) throw error;
  if (mapped.logAs !== undefined) logMappedFailure(logger, mapped.logAs, error, exchange.path);
  // HTTP/2 (the gRPC executable's REST side) forbids the header; there the stream alone ends.
  const close = mapped.closeConnection && exchange.req.httpVersionMajor < 2;
  const headers: Record<string, string> = close ? { connection: 'close' } : {};
  if (mapped.retryAfterSeconds !== undefined) headers['retry-after'] = String(mapped.retryAfterSeconds);
  sendError(exchange.res, mapped.status, mapped.message, headers);
}
