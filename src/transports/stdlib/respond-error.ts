import { toHttpError } from '../http/http-errors.ts';
import { sendError, type Exchange } from './exchange.ts';

/**
 * Writes the error table's answer. An unexpected error is rethrown after answering so the recovery
 * layer logs it once; expected ones (4xx, 503 session) are not logged here (koa's rule: log only the
 * unexpected).
 */
export function respondWithError(exchange: Exchange, error: unknown): void {
  const mapped = toHttpError(error);
  if (!mapped.expected) throw error;
  // A refused oversized body is left unread: the connection cannot be reused.
  const headers: Record<string, string> = mapped.status === 413 ? { connection: 'close' } : {};
  sendError(exchange.res, mapped.status, mapped.message, headers);
}
