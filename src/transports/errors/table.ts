/**
 * The one error table (spec 7): everything a request can fail with, classified once, with its HTTP status,
 * message, gRPC code and operator log line. HTTP answers with httpErrorAnswer, gRPC (grpc/handler.ts) with
 * mapError; both log with logPanic and logMappedFailure. The errors only a transport raises and the done
 * signal's reason live here too, so the gRPC side needs nothing of the REST code (grpc-knows-no-rest).
 */
import type { Logger } from '../../ports/logger.ts';
import { DomainError, ErrInvalidOrderId, ErrUnavailable } from '../../domain/errors.ts';
import { namedError } from '../../domain/named-error.ts';
import { ErrMissingCredentials } from '../../service/authenticate.ts';
import { ErrLoginBusy } from '../../service/login-gate.ts';
import { ErrInvalidToken } from '../../service/token-service.ts';
import { isSessionError } from '../../session/scope.ts';

// The request could not be read (spec 7, "other HTTP errors"): answered with the table's text, never logged.
export class ErrMalformedBody extends namedError('ErrMalformedBody', 'malformed request body') {}
export class ErrBodyTooLarge extends namedError('ErrBodyTooLarge', 'request body too large') {}
/** The client went away while its request was read; the answer reaches nobody. */
export class ErrClientClosed extends namedError('ErrClientClosed', 'client closed request') {}
/** Rule HTTP-host-header (RFC 9112 §3.2). */
export class ErrBadHostHeader extends namedError('ErrBadHostHeader', 'missing or duplicate Host header') {}
/** Rule HTTP-json-content-type. */
export class ErrUnsupportedMediaType extends namedError('ErrUnsupportedMediaType', 'Content-Type must be application/json') {}
/** Rule HTTP-content-encoding. */
export class ErrUnsupportedContentEncoding extends namedError('ErrUnsupportedContentEncoding', 'Content-Encoding not supported') {}

/** The reason a request's done signal aborts with (spec 3.2 rule 2): a wait it cuts is the client gone, never a panic. */
export const REQUEST_ENDED: DOMException = new DOMException('the request ended', 'AbortError');

/** gRPC status codes as wire numbers (grpc/doc/statuscodes.md), written into `grpc-status`. */
export const GRPC_STATUS = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcCodeName = keyof typeof GRPC_STATUS;

export interface ErrorAnswer {
  readonly httpStatus: number;
  /** What the caller reads on every transport; `null`: the error's own text (ErrValidation, spec 7 rule 4). */
  readonly message: string | null;
  readonly grpcCode: GrpcCodeName;
  /** The operator's log line; none for a caller's mistake (log only what the operator must act on). */
  readonly log?: string;
  /** HTTP/1 only: the body was left unread, so the connection cannot be reused. */
  readonly closeConnection?: true;
  /** HTTP only: Retry-After, in whole seconds. */
  readonly retryAfterSeconds?: number;
  /** HTTP only: fields every answer of the row carries (a 401's challenge, a 415's Accept-Encoding). */
  readonly httpHeaders?: Readonly<Record<string, string>>;
}

/**
 * Rule HTTP-401-challenge (RFC 9110 section 11.6.1: a 401 carries at least one challenge; RFC 6750 section 3:
 * the Bearer one, with error="invalid_token" only when a token was sent and refused).
 */
const BEARER_CHALLENGE = { 'www-authenticate': 'Bearer realm="orders"' } as const;
const INVALID_TOKEN_CHALLENGE = { 'www-authenticate': 'Bearer realm="orders", error="invalid_token"' } as const;
/** Rule HTTP-content-encoding (RFC 9110 section 12.5.3): the only coding a body may have. */
const IDENTITY_ONLY = { 'accept-encoding': 'identity' } as const;

/** Spec 4.3 rule 1: the log line of a recovered panic, i.e. of anything the table does not know. */
export const PANIC_LOG_LINE = 'api: panic recovered';
/** The recovery layers' answer to anything thrown that the table does not know (spec 4.3 rule 1). */
export const INTERNAL_ERROR: { readonly status: number; readonly message: string } = { status: 500, message: 'internal server error' };

const ROWS = {
  'not-found': { httpStatus: 404, message: 'not found', grpcCode: 'NOT_FOUND' },
  forbidden: { httpStatus: 403, message: 'forbidden', grpcCode: 'PERMISSION_DENIED' },
  'invalid-credentials': { httpStatus: 401, message: 'invalid credentials', grpcCode: 'UNAUTHENTICATED', httpHeaders: BEARER_CHALLENGE },
  validation: { httpStatus: 400, message: null, grpcCode: 'INVALID_ARGUMENT' },
  // draft-ietf-httpapi-idempotency-key-header: a key reused with another body is the client's mistake.
  'idempotency-key-reused': {
    httpStatus: 422,
    message: 'Idempotency-Key already used for a different request',
    grpcCode: 'FAILED_PRECONDITION',
  },
  'missing-credentials': {
    httpStatus: 401,
    message: 'missing or malformed Authorization header',
    grpcCode: 'UNAUTHENTICATED',
    httpHeaders: BEARER_CHALLENGE,
  },
  'invalid-token': {
    httpStatus: 401,
    message: 'invalid or expired token',
    grpcCode: 'UNAUTHENTICATED',
    httpHeaders: INVALID_TOKEN_CHALLENGE,
  },
  'invalid-order-id': { httpStatus: 400, message: 'invalid order id', grpcCode: 'INVALID_ARGUMENT' },
  'malformed-body': { httpStatus: 400, message: 'malformed request body', grpcCode: 'INVALID_ARGUMENT' },
  'body-too-large': { httpStatus: 413, message: 'request body too large', grpcCode: 'RESOURCE_EXHAUSTED', closeConnection: true },
  'bad-host-header': { httpStatus: 400, message: 'missing or duplicate Host header', grpcCode: 'INVALID_ARGUMENT' },
  'unsupported-media-type': {
    httpStatus: 415,
    message: 'Content-Type must be application/json',
    grpcCode: 'INVALID_ARGUMENT',
    closeConnection: true,
    httpHeaders: IDENTITY_ONLY,
  },
  'unsupported-content-encoding': {
    httpStatus: 415,
    message: 'Content-Encoding not supported',
    grpcCode: 'INVALID_ARGUMENT',
    closeConnection: true,
    httpHeaders: IDENTITY_ONLY,
  },
  // nginx's 499: recorded in metrics and the request log, never seen by a client.
  'client-closed': { httpStatus: 499, message: 'client closed request', grpcCode: 'CANCELLED' },
  // Spec 7 rule 3: the service cannot hold a session for this caller right now.
  'session-unavailable': { httpStatus: 503, message: 'session unavailable', grpcCode: 'UNAVAILABLE' },
  // Rule LOGIN-gate: a slot frees within a derivation or two (~0.2 s each), so 1 s is the smallest honest Retry-After.
  'login-busy': { httpStatus: 429, message: 'too many login attempts', grpcCode: 'RESOURCE_EXHAUSTED', retryAfterSeconds: 1 },
  // An outage is no bug: masked as 500 like one, but logged as what it is.
  'backend-unavailable': { httpStatus: 500, message: INTERNAL_ERROR.message, grpcCode: 'INTERNAL', log: 'api: backend unavailable' },
  internal: { httpStatus: 500, message: INTERNAL_ERROR.message, grpcCode: 'INTERNAL', log: PANIC_LOG_LINE },
} satisfies Record<string, ErrorAnswer>;

export type ErrorKind = keyof typeof ROWS;
export const ERROR_TABLE: Readonly<Record<ErrorKind, ErrorAnswer>> = ROWS;

const DOMAIN_KIND: Record<DomainError['kind'], ErrorKind> = {
  ErrNotFound: 'not-found',
  ErrForbidden: 'forbidden',
  ErrInvalidCredentials: 'invalid-credentials',
  ErrValidation: 'validation',
  ErrIdempotencyKeyReused: 'idempotency-key-reused',
};

/** The single instanceof chain. Anything not named here (ErrConflict, a TypeError, a string) is internal. */
function classifyError(error: unknown): ErrorKind {
  if (error instanceof DomainError) return DOMAIN_KIND[error.kind];
  if (error instanceof ErrMissingCredentials) return 'missing-credentials';
  if (error instanceof ErrInvalidToken) return 'invalid-token';
  if (error instanceof ErrInvalidOrderId) return 'invalid-order-id';
  if (isSessionError(error)) return 'session-unavailable';
  if (error instanceof ErrLoginBusy) return 'login-busy';
  if (error instanceof ErrMalformedBody) return 'malformed-body';
  if (error instanceof ErrBodyTooLarge) return 'body-too-large';
  if (error instanceof ErrBadHostHeader) return 'bad-host-header';
  if (error instanceof ErrUnsupportedMediaType) return 'unsupported-media-type';
  if (error instanceof ErrUnsupportedContentEncoding) return 'unsupported-content-encoding';
  if (error instanceof ErrClientClosed || error === REQUEST_ENDED) return 'client-closed';
  if (error instanceof ErrUnavailable) return 'backend-unavailable';
  return 'internal';
}

/** `error` classified, with its row and what the caller is told. */
export interface MappedError extends ErrorAnswer {
  readonly kind: ErrorKind;
  readonly message: string;
  /** False for `internal` only: the recovery step logs it as a panic and masks it. */
  readonly expected: boolean;
}

export function mapError(error: unknown): MappedError {
  const kind = classifyError(error);
  const row = ERROR_TABLE[kind];
  return { ...row, kind, message: row.message ?? errorText(error), expected: kind !== 'internal' };
}

/**
 * Both HTTP transports' answer to `error`, after logging what the operator must hear of (a backend outage).
 * Anything the table does not know is rethrown, for the recovery layer to log once and mask.
 */
export function httpErrorAnswer(
  error: unknown,
  logger: Logger,
  path: string,
  http2 = false,
): { status: number; message: string; headers: Record<string, string> } {
  const mapped = mapError(error);
  if (!mapped.expected) throw error;
  if (mapped.log !== undefined) logMappedFailure(logger, mapped.log, error, path);
  const headers: Record<string, string> = { ...mapped.httpHeaders };
  // HTTP/2 (orders-grpc's REST side) forbids the field; there the stream alone ends.
  if (mapped.closeConnection && !http2) headers['connection'] = 'close';
  if (mapped.retryAfterSeconds !== undefined) headers['retry-after'] = String(mapped.retryAfterSeconds);
  return { status: mapped.httpStatus, message: mapped.message, headers };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An expected failure the operator must hear of (row.log), with the error's own secret-free text. */
export function logMappedFailure(logger: Logger, message: string, error: unknown, path: string): void {
  logger.error({ err: errorText(error), path }, message);
}

/** Spec 4.3 rule 1, on every transport (gRPC's path is the method). */
export function logPanic(logger: Logger, error: unknown, path: string): void {
  logger.error({ panic: errorText(error), path }, PANIC_LOG_LINE);
}
