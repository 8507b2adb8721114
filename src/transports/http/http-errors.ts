import { DomainError, ErrUnavailable } from '../../domain/errors.ts';
import { namedError } from '../../domain/named-error.ts';
import { ErrMissingCredentials } from '../../service/authenticate.ts';
import { ErrInvalidToken } from '../../service/token-service.ts';
import { isSessionError } from '../../session/session-errors.ts';

/** Errors only HTTP has: the request itself could not be read. */
export class ErrMalformedBody extends namedError('ErrMalformedBody', 'malformed request body') {}
export class ErrBodyTooLarge extends namedError('ErrBodyTooLarge', 'request body too large') {}
/** The client went away while its request was being read; the answer reaches nobody. */
export class ErrClientClosed extends namedError('ErrClientClosed', 'client closed request') {}
export class ErrInvalidOrderId extends namedError('ErrInvalidOrderId', 'invalid order id') {}

export interface HttpError {
  readonly status: number;
  readonly message: string;
  /** Whether the error was expected; unexpected ones are logged by the caller (5xx are masked). */
  readonly expected: boolean;
  /** The request body was left unread: an HTTP/1 connection cannot be reused (HTTP/2 resets only the stream). */
  readonly closeConnection?: boolean;
  /** An expected failure the operator must still hear of (a backend outage), logged under this message. */
  readonly logAs?: string;
}

export const INTERNAL_ERROR: HttpError = { status: 500, message: 'internal server error', expected: false };

const DOMAIN_STATUS: Record<DomainError['kind'], number> = {
  ErrNotFound: 404,
  ErrForbidden: 403,
  ErrInvalidCredentials: 401,
  ErrValidation: 400,
};

/**
 * The one error → status table of both HTTP transports (spec 7). Domain messages are shown as they
 * are (ErrValidation carries its own text); anything unknown is masked as 500.
 */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof DomainError) return { status: DOMAIN_STATUS[error.kind], message: error.message, expected: true };
  if (error instanceof ErrMissingCredentials || error instanceof ErrInvalidToken) {
    return { status: 401, message: error.message, expected: true };
  }
  if (isSessionError(error)) return { status: 503, message: 'session unavailable', expected: true };
  if (error instanceof ErrMalformedBody || error instanceof ErrInvalidOrderId) return { status: 400, message: error.message, expected: true };
  if (error instanceof ErrBodyTooLarge) return { status: 413, message: error.message, expected: true, closeConnection: true };
  // nginx's 499: recorded in metrics and the request log, never seen by a client.
  if (error instanceof ErrClientClosed) return { status: 499, message: error.message, expected: true };
  // A backend outage is not a bug: masked as 500 like one, but logged as what it is, not as a panic.
  if (error instanceof ErrUnavailable) return { ...INTERNAL_ERROR, expected: true, logAs: 'api: backend unavailable' };
  return INTERNAL_ERROR;
}
