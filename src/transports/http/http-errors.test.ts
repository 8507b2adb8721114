import { describe, expect, it } from 'vitest';
import { ErrConflict, ErrForbidden, ErrInvalidCredentials, ErrNotFound, ErrUnavailable, ErrValidation } from '../../domain/errors.ts';
import { ErrMissingCredentials } from '../../service/authenticate.ts';
import { ErrInvalidToken } from '../../service/token-service.ts';
import { ErrNoDoneSignal, ErrNoScopeKey, ErrScopeFull } from '../../session/session-errors.ts';
import { ErrBodyTooLarge, ErrClientClosed, ErrInvalidOrderId, ErrMalformedBody, INTERNAL_ERROR, toHttpError, type HttpError } from './http-errors.ts';

/** Spec 7, restated by hand: the table is checked against the spec, not against itself. */
const TABLE: [string, unknown, HttpError][] = [
  ['ErrNotFound', new ErrNotFound(), { status: 404, message: 'not found', expected: true }],
  ['ErrForbidden', new ErrForbidden(), { status: 403, message: 'forbidden', expected: true }],
  ['ErrInvalidCredentials', new ErrInvalidCredentials(), { status: 401, message: 'invalid credentials', expected: true }],
  ['ErrValidation (own text)', new ErrValidation('quantity must be a positive integer'), { status: 400, message: 'quantity must be a positive integer', expected: true }],
  ['ErrValidation (other text)', new ErrValidation('item is required'), { status: 400, message: 'item is required', expected: true }],
  ['ErrMissingCredentials', new ErrMissingCredentials(), { status: 401, message: 'missing or malformed Authorization header', expected: true }],
  ['ErrInvalidToken', new ErrInvalidToken(), { status: 401, message: 'invalid or expired token', expected: true }],
  ['ErrNoScopeKey', new ErrNoScopeKey(), { status: 503, message: 'session unavailable', expected: true }],
  ['ErrScopeFull', new ErrScopeFull(50_000), { status: 503, message: 'session unavailable', expected: true }],
  ['ErrNoDoneSignal', new ErrNoDoneSignal(), { status: 503, message: 'session unavailable', expected: true }],
  ['ErrMalformedBody', new ErrMalformedBody(), { status: 400, message: 'malformed request body', expected: true }],
  ['ErrInvalidOrderId', new ErrInvalidOrderId(), { status: 400, message: 'invalid order id', expected: true }],
  // The body is left unread, so an HTTP/1 connection cannot be reused.
  ['ErrBodyTooLarge', new ErrBodyTooLarge(), { status: 413, message: 'request body too large', expected: true, closeConnection: true }],
  // Nobody is left to read it; 499 only reaches metrics and the request log.
  ['ErrClientClosed', new ErrClientClosed(), { status: 499, message: 'client closed request', expected: true }],
  // A backend outage is masked like a bug but logged as what it is, never as a panic.
  [
    'ErrUnavailable',
    new ErrUnavailable('database: find order: password authentication failed for user "orders"'),
    { status: 500, message: 'internal server error', expected: true, logAs: 'api: backend unavailable' },
  ],
  ['ErrConflict', new ErrConflict('database: insert order: order x already exists'), { status: 500, message: 'internal server error', expected: false }],
  ['TypeError', new TypeError("Cannot read properties of undefined (reading 'id')"), { status: 500, message: 'internal server error', expected: false }],
  ['plain Error', new Error('boom'), { status: 500, message: 'internal server error', expected: false }],
  ['a thrown string', 'boom', { status: 500, message: 'internal server error', expected: false }],
  ['undefined', undefined, { status: 500, message: 'internal server error', expected: false }],
  ['null', null, { status: 500, message: 'internal server error', expected: false }],
  ['an error-shaped object', { kind: 'ErrNotFound', message: 'not found' }, { status: 500, message: 'internal server error', expected: false }],
];

describe('toHttpError (spec 7)', () => {
  it.each(TABLE)('%s', (_name, error, expected) => {
    expect(toHttpError(error)).toStrictEqual(expected);
  });

  it('INTERNAL_ERROR is the masked 500', () => {
    expect(INTERNAL_ERROR).toStrictEqual({ status: 500, message: 'internal server error', expected: false });
  });
});
