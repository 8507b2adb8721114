import { Code } from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import { ErrConflict, ErrForbidden, ErrInvalidCredentials, ErrNotFound, ErrUnavailable, ErrValidation } from '../../src/domain/errors.ts';
import { ErrMissingCredentials } from '../../src/service/authenticate.ts';
import { ErrInvalidToken } from '../../src/service/token-service.ts';
import { ErrNoDoneSignal, ErrNoScopeKey, ErrScopeFull } from '../../src/session/session-errors.ts';
import { ErrInvalidOrderId } from '../../src/transports/http/http-errors.ts';
import { toConnectError, toGrpcError } from '../../src/transports/grpc/grpc-errors.ts';

// Hard-coded expectations (spec 7, 5 rule 8): the table is checked against the spec, not against itself.
// Codes as numbers too, so a renamed enum member cannot make both sides agree by accident.
const CASES: ReadonlyArray<readonly [string, unknown, number, string, boolean]> = [
  ['ErrNotFound', new ErrNotFound(), 5, 'not found', true],
  ['ErrForbidden', new ErrForbidden(), 7, 'forbidden', true],
  ['ErrInvalidCredentials', new ErrInvalidCredentials(), 16, 'invalid credentials', true],
  ['ErrValidation', new ErrValidation('quantity must be a positive integer'), 3, 'quantity must be a positive integer', true],
  ['ErrMissingCredentials', new ErrMissingCredentials(), 16, 'missing or malformed Authorization header', true],
  ['ErrInvalidToken', new ErrInvalidToken(), 16, 'invalid or expired token', true],
  ['ErrInvalidOrderId', new ErrInvalidOrderId(), 3, 'invalid order id', true],
  ['ErrNoScopeKey', new ErrNoScopeKey(), 14, 'session unavailable', true],
  ['ErrScopeFull', new ErrScopeFull(50_000), 14, 'session unavailable', true],
  ['ErrNoDoneSignal', new ErrNoDoneSignal(), 14, 'session unavailable', true],
  ['ErrUnavailable', new ErrUnavailable('database: find order: connection refused to db.internal'), 13, 'internal server error', false],
  ['ErrConflict', new ErrConflict('duplicate key'), 13, 'internal server error', false],
  ['TypeError', new TypeError("Cannot read properties of undefined (reading 'x')"), 13, 'internal server error', false],
  ['a thrown string', 'secret-ish detail', 13, 'internal server error', false],
  ['undefined', undefined, 13, 'internal server error', false],
];

describe('grpc error table (spec 7)', () => {
  it.each(CASES)('%s', (_name, error, code, message, expected) => {
    expect(toGrpcError(error)).toEqual({ code, message, expected });
  });

  it('Code values are the gRPC wire numbers used above', () => {
    expect([Code.InvalidArgument, Code.NotFound, Code.PermissionDenied, Code.Internal, Code.Unavailable, Code.Unauthenticated]).toEqual([3, 5, 7, 13, 14, 16]);
  });

  it('the ConnectError carries the mapped message only, never the cause', () => {
    const connectError = toConnectError(toGrpcError(new ErrUnavailable('database: connection refused to db.internal')));
    expect(connectError.code).toBe(13);
    expect(connectError.rawMessage).toBe('internal server error');
    expect(connectError.cause).toBeUndefined();
  });
});
