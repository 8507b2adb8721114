import { Code, ConnectError } from '@connectrpc/connect';
import { DomainError } from '../../domain/errors.ts';
import { ErrMissingCredentials } from '../../service/authenticate.ts';
import { ErrInvalidToken } from '../../service/token-service.ts';
import { isSessionError } from '../../session/session-errors.ts';
import { ErrInvalidOrderId } from '../http/http-errors.ts';

export interface GrpcError {
  readonly code: Code;
  readonly message: string;
  /** Unexpected errors are logged once by the caller; their cause never reaches the client. */
  readonly expected: boolean;
}

/** Spec 7 "anything else": the cause is masked. */
export const GRPC_INTERNAL_ERROR: GrpcError = { code: Code.Internal, message: 'internal server error', expected: false };

const DOMAIN_CODE: Record<DomainError['kind'], Code> = {
  ErrNotFound: Code.NotFound,
  ErrForbidden: Code.PermissionDenied,
  ErrInvalidCredentials: Code.Unauthenticated,
  ErrValidation: Code.InvalidArgument,
};

/**
 * The one error → gRPC code table of this transport (spec 7, 5 rule 8). Messages are the HTTP
 * transports' texts (spec 7 rule 5 leaves gRPC's open), so a client sees the same words on both.
 */
export function toGrpcError(error: unknown): GrpcError {
  if (error instanceof DomainError) return { code: DOMAIN_CODE[error.kind], message: error.message, expected: true };
  if (error instanceof ErrMissingCredentials || error instanceof ErrInvalidToken) {
    return { code: Code.Unauthenticated, message: error.message, expected: true };
  }
  if (error instanceof ErrInvalidOrderId) return { code: Code.InvalidArgument, message: error.message, expected: true };
  // HTTP's 503: the service is there but cannot hold a session for this caller right now.
  if (isSessionError(error)) return { code: Code.Unavailable, message: 'session unavailable', expected: true };
  return GRPC_INTERNAL_ERROR;
}

export function toConnectError(mapped: GrpcError): ConnectError {
  return new ConnectError(mapped.message, mapped.code);
}
