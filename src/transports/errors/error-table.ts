import { DomainError, ErrInvalidOrderId, ErrUnavailable } from '../../domain/errors.ts';
import { ErrMissingCredentials } from '../../service/authenticate.ts';
import { ErrLoginBusy } from '../../service/login-gate.ts';
import { ErrInvalidToken } from '../../service/token-service.ts';
import { isSessionError } from '../../session/scope.ts';
import { ErrBadHostHeader, ErrBodyTooLarge, ErrClientClosed, ErrMalformedBody, ErrUnsupportedMediaType } from './request-errors.ts';
import { REQUEST_ENDED } from '../http/rest/request-ended.ts';

/**
 * The one classification of everything a request can fail with (spec 7). Both HTTP transports
 * (http/rest/http-errors.ts) and gRPC (grpc/grpc-handler.ts) derive their answers from ERROR_TABLE, so a
 * status, a message, a code or a log line is written once.
 */
export type ErrorKind =
  | 'not-found'
  | 'forbidden'
  | 'invalid-credentials'
  | 'validation'
  | 'idempotency-key-reused'
  | 'missing-credentials'
  | 'invalid-token'
  | 'invalid-order-id'
  | 'malformed-body'
  | 'body-too-large'
  | 'bad-host-header'
  | 'unsupported-media-type'
  | 'client-closed'
  | 'session-unavailable'
  | 'login-busy'
  | 'backend-unavailable'
  | 'internal';

/**
 * gRPC status codes used by the table, with their wire numbers (grpc/doc/statuscodes.md): the gRPC
 * server writes the number into `grpc-status`. Names as the gRPC specification spells them.
 */
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
  /** What the caller reads on both transports; `null`: the error's own text (ErrValidation, spec 7 rule 4). */
  readonly message: string | null;
  readonly grpcCode: GrpcCodeName;
  /**
   * The operator's log line, or undefined for a caller's mistake (not logged: koa's rule, log only what
   * the operator must act on). `internal` is logged by the transport's recovery step under this message.
   */
  readonly log: string | undefined;
  /** HTTP only: the body was left unread, so an HTTP/1 connection cannot be reused. */
  readonly closeConnection?: true;
  /** HTTP only: a Retry-After header, in whole seconds. */
  readonly retryAfterSeconds?: number;
}

/** Spec 4.3 rule 1: the message of a recovered panic, i.e. of anything the table does not know. */
export const PANIC_LOG_LINE = 'api: panic recovered';

export const ERROR_TABLE: Readonly<Record<ErrorKind, ErrorAnswer>> = {
  'not-found': { httpStatus: 404, message: 'not found', grpcCode: 'NOT_FOUND', log: undefined },
  forbidden: { httpStatus: 403, message: 'forbidden', grpcCode: 'PERMISSION_DENIED', log: undefined },
  'invalid-credentials': { httpStatus: 401, message: 'invalid credentials', grpcCode: 'UNAUTHENTICATED', log: undefined },
  validation: { httpStatus: 400, message: null, grpcCode: 'INVALID_ARGUMENT', log: undefined },
  // draft-ietf-httpapi-idempotency-key-header: a key reused with another body is the client's mistake.
  'idempotency-key-reused': {
    httpStatus: 422,
    message: 'Idempotency-Key already used for a different request',
    grpcCode: 'FAILED_PRECONDITION',
    log: undefined,
  },
  'missing-credentials': {
    httpStatus: 401,
    message: 'missing or malformed Authorization header',
    grpcCode: 'UNAUTHENTICATED',
    log: undefined,
  },
  'invalid-token': { httpStatus: 401, message: 'invalid or expired token', grpcCode: 'UNAUTHENTICATED', log: undefined },
  'invalid-order-id': { httpStatus: 400, message: 'invalid order id', grpcCode: 'INVALID_ARGUMENT', log: undefined },
  'malformed-body': { httpStatus: 400, message: 'malformed request body', grpcCode: 'INVALID_ARGUMENT', log: undefined },
  'body-too-large': {
    httpStatus: 413,
    message: 'request body too large',
    grpcCode: 'RESOURCE_EXHAUSTED',
    log: undefined,
    closeConnection: true,
  },
  // REST only (RFC 9112 §3.2; rule HTTP-host-header).
  'bad-host-header': { httpStatus: 400, message: 'missing or duplicate Host header', grpcCode: 'INVALID_ARGUMENT', log: undefined },
  // REST only: the body is left unread (rule HTTP-json-content-type).
  'unsupported-media-type': {
    httpStatus: 415,
    message: 'Content-Type must be application/json',
    grpcCode: 'INVALID_ARGUMENT',
    log: undefined,
    closeConnection: true,
  },
  // nginx's 499: recorded in metrics and the request log, never seen by a client.
  'client-closed': { httpStatus: 499, message: 'client closed request', grpcCode: 'CANCELLED', log: undefined },
  // The service is there but cannot hold a session for this caller right now (spec 7 rule 3).
  'session-unavailable': { httpStatus: 503, message: 'session unavailable', grpcCode: 'UNAVAILABLE', log: undefined },
  // The login gate is full for this caller (rule LOGIN-gate): refused at once; a slot frees within a
  // derivation or two (~0.2 s each), so one second is the honest smallest Retry-After.
  'login-busy': {
    httpStatus: 429,
    message: 'too many login attempts',
    grpcCode: 'RESOURCE_EXHAUSTED',
    log: undefined,
    retryAfterSeconds: 1,
  },
  // A backend outage is not a bug: masked as 500 like one, but logged as what it is, not as a panic.
  'backend-unavailable': { httpStatus: 500, message: 'internal server error', grpcCode: 'INTERNAL', log: 'api: backend unavailable' },
  // Spec 7 "anything else": the cause is masked and logged once.
  internal: { httpStatus: 500, message: 'internal server error', grpcCode: 'INTERNAL', log: PANIC_LOG_LINE },
};

const DOMAIN_KIND: Record<DomainError['kind'], ErrorKind> = {
  ErrNotFound: 'not-found',
  ErrForbidden: 'forbidden',
  ErrInvalidCredentials: 'invalid-credentials',
  ErrValidation: 'validation',
  ErrIdempotencyKeyReused: 'idempotency-key-reused',
};

/** The single instanceof chain. Anything not named here (ErrConflict, a TypeError, a string) is internal. */
export function classifyError(error: unknown): ErrorKind {
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
  // The done signal's reason, which a wait on it rejects with (a queued login whose caller went away).
  if (error instanceof ErrClientClosed || error === REQUEST_ENDED) return 'client-closed';
  if (error instanceof ErrUnavailable) return 'backend-unavailable';
  return 'internal';
}

/** `error` classified and its row read, as every transport's mapping needs it. */
export interface MappedError {
  readonly kind: ErrorKind;
  readonly row: ErrorAnswer;
  /** What the caller is told, on any transport. */
  readonly message: string;
  /** False for `internal` only: the transport's recovery step logs it (row.log) and masks it. */
  readonly expected: boolean;
  /** An expected failure the operator must still hear of (a backend outage), logged under this message. */
  readonly logAs: string | undefined;
}

export function mapError(error: unknown): MappedError {
  const kind = classifyError(error);
  const row = ERROR_TABLE[kind];
  const expected = kind !== 'internal';
  return {
    kind,
    row,
    message: row.message ?? (error instanceof Error ? error.message : String(error)),
    expected,
    logAs: expected ? row.log : undefined,
  };
}
