import { ERROR_TABLE, mapError } from '../../errors/error-table.ts';

export interface HttpError {
  readonly status: number;
  readonly message: string;
  /** Whether the error was expected; unexpected ones are rethrown to the recovery step, which logs them. */
  readonly expected: boolean;
  /** The request body was left unread: an HTTP/1 connection cannot be reused (HTTP/2 resets only the stream). */
  readonly closeConnection?: boolean;
  /** An expected failure the operator must still hear of (a backend outage), logged under this message. */
  readonly logAs?: string;
  /** Sent as Retry-After (whole seconds). */
  readonly retryAfterSeconds?: number;
}

export const INTERNAL_ERROR: HttpError = {
  status: ERROR_TABLE.internal.httpStatus,
  message: ERROR_TABLE.internal.message ?? '',
  expected: false,
};

/** Both HTTP transports' answer to `error`, read from the one table (errors/error-table.ts, spec 7). */
export function toHttpError(error: unknown): HttpError {
  const mapped = mapError(error);
  return {
    status: mapped.row.httpStatus,
    message: mapped.message,
    expected: mapped.expected,
    ...(mapped.row.closeConnection ? { closeConnection: true } : {}),
    ...(mapped.logAs !== undefined ? { logAs: mapped.logAs } : {}),
    ...(mapped.row.retryAfterSeconds !== undefined ? { retryAfterSeconds: mapped.row.retryAfterSeconds } : {}),
  };
}
