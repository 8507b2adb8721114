import { describe, expect, it } from 'vitest';
import {
  ErrConflict,
  ErrForbidden,
  ErrIdempotencyKeyReused,
  ErrInvalidCredentials,
  ErrInvalidOrderId,
  ErrNotFound,
  ErrUnavailable,
  ErrValidation,
} from '../../domain/errors.ts';
import { ErrMissingCredentials } from '../../service/authenticate.ts';
import { ErrInvalidToken } from '../../service/token-service.ts';
import { ErrNoDoneSignal, ErrNoScopeKey, ErrScopeFull } from '../../session/scope.ts';
import { ErrLoginBusy } from '../../service/login-gate.ts';
import { createLogger } from '../../observability/logger.ts';
import { LogCapture } from '../../../test/support/log-capture.ts';
import {
  ErrBadHostHeader,
  ErrBodyTooLarge,
  ErrClientClosed,
  ErrMalformedBody,
  ErrUnsupportedContentEncoding,
  ErrUnsupportedMediaType,
  GRPC_STATUS,
  httpErrorAnswer,
  mapError,
  REQUEST_ENDED,
} from './table.ts';

/**
 * Spec 7 (and 4.3 rule 1, 5 rule 8), restated by hand: the table is checked against the spec, not
 * against itself. gRPC codes are wire numbers, so a renamed enum member cannot make both sides agree.
 * Columns: error, HTTP status, message (both transports), gRPC code, operator log line.
 */
const OUTAGE = 'database: find order: password authentication failed for user "orders"';
const CASES: ReadonlyArray<readonly [string, unknown, number, string, number, string | undefined]> = [
  ['ErrNotFound', new ErrNotFound(), 404, 'not found', 5, undefined],
  ['ErrForbidden', new ErrForbidden(), 403, 'forbidden', 7, undefined],
  ['ErrInvalidCredentials', new ErrInvalidCredentials(), 401, 'invalid credentials', 16, undefined],
  [
    'ErrValidation (own text)',
    new ErrValidation('quantity must be a positive integer'),
    400,
    'quantity must be a positive integer',
    3,
    undefined,
  ],
  ['ErrValidation (other text)', new ErrValidation('item is required'), 400, 'item is required', 3, undefined],
  ['ErrIdempotencyKeyReused', new ErrIdempotencyKeyReused(), 422, 'Idempotency-Key already used for a different request', 9, undefined],
  ['ErrMissingCredentials', new ErrMissingCredentials(), 401, 'missing or malformed Authorization header', 16, undefined],
  ['ErrInvalidToken', new ErrInvalidToken(), 401, 'invalid or expired token', 16, undefined],
  ['ErrInvalidOrderId', new ErrInvalidOrderId(), 400, 'invalid order id', 3, undefined],
  ['ErrNoScopeKey', new ErrNoScopeKey(), 503, 'session unavailable', 14, undefined],
  ['ErrScopeFull', new ErrScopeFull(50_000), 503, 'session unavailable', 14, undefined],
  ['ErrNoDoneSignal', new ErrNoDoneSignal(), 503, 'session unavailable', 14, undefined],
  ['ErrMalformedBody', new ErrMalformedBody(), 400, 'malformed request body', 3, undefined],
  ['ErrBodyTooLarge', new ErrBodyTooLarge(), 413, 'request body too large', 8, undefined],
  // Rule LOGIN-gate: the login gate's overflow is 429 / RESOURCE_EXHAUSTED (8), answered at once, not logged.
  ['ErrLoginBusy', new ErrLoginBusy(), 429, 'too many login attempts', 8, undefined],
  ['ErrBadHostHeader', new ErrBadHostHeader(), 400, 'missing or duplicate Host header', 3, undefined],
  ['ErrUnsupportedMediaType', new ErrUnsupportedMediaType(), 415, 'Content-Type must be application/json', 3, undefined],
  // Nobody is left to read it; 499 only reaches metrics and the request log.
  ['ErrClientClosed', new ErrClientClosed(), 499, 'client closed request', 1, undefined],
  // The done signal's reason (a queued login whose caller went away rejects with it): the same, never a panic.
  ['REQUEST_ENDED', REQUEST_ENDED, 499, 'client closed request', 1, undefined],
  // A backend outage is masked like a bug (its cause, with the password, never in the message) but
  // logged as what it is, on both transports, never as a panic.
  ['ErrUnavailable', new ErrUnavailable(OUTAGE), 500, 'internal server error', 13, 'api: backend unavailable'],
  // Everything else is a bug: masked, and logged by the recovery step as a panic (spec 4.3 rule 1).
  [
    'ErrConflict',
    new ErrConflict('database: insert order: order x already exists'),
    500,
    'internal server error',
    13,
    'api: panic recovered',
  ],
  [
    'TypeError',
    new TypeError("Cannot read properties of undefined (reading 'id')"),
    500,
    'internal server error',
    13,
    'api: panic recovered',
  ],
  ['plain Error', new Error('boom'), 500, 'internal server error', 13, 'api: panic recovered'],
  ['a thrown string', 'boom', 500, 'internal server error', 13, 'api: panic recovered'],
  ['undefined', undefined, 500, 'internal server error', 13, 'api: panic recovered'],
  ['null', null, 500, 'internal server error', 13, 'api: panic recovered'],
  ['an error-shaped object', { kind: 'ErrNotFound', message: 'not found' }, 500, 'internal server error', 13, 'api: panic recovered'],
];

describe('the error table (spec 7)', () => {
  it.each(CASES)('%s', (_name, error, status, message, grpcCode, log) => {
    const mapped = mapError(error);
    expect(mapped.httpStatus).toBe(status);
    expect(mapped.message).toBe(message);
    expect(GRPC_STATUS[mapped.grpcCode]).toBe(grpcCode);
    expect(mapped.log).toBe(log);
    expect(mapped.expected).toBe(log !== 'api: panic recovered');
  });
});

describe('httpErrorAnswer: the table as both HTTP transports answer', () => {
  it.each([
    ['an expected error carries status and message', new ErrNotFound(), { status: 404, message: 'not found', headers: {} }],
    // Only answers that leave the body unread close the connection.
    [
      'a too large body closes the connection',
      new ErrBodyTooLarge(),
      { status: 413, message: 'request body too large', headers: { connection: 'close' } },
    ],
    [
      'an unsupported media type closes the connection',
      new ErrUnsupportedMediaType(),
      { status: 415, message: 'Content-Type must be application/json', headers: { connection: 'close', 'accept-encoding': 'identity' } },
    ],
    [
      'HTTP-content-encoding: a content coding is refused, naming the one that is read',
      new ErrUnsupportedContentEncoding(),
      { status: 415, message: 'Content-Encoding not supported', headers: { connection: 'close', 'accept-encoding': 'identity' } },
    ],
    [
      'HTTP-401-challenge: a missing credential is challenged for a bearer token',
      new ErrMissingCredentials(),
      { status: 401, message: 'missing or malformed Authorization header', headers: { 'www-authenticate': 'Bearer realm="orders"' } },
    ],
    [
      'HTTP-401-challenge: a refused token is challenged with error="invalid_token"',
      new ErrInvalidToken(),
      {
        status: 401,
        message: 'invalid or expired token',
        headers: { 'www-authenticate': 'Bearer realm="orders", error="invalid_token"' },
      },
    ],
    [
      'a busy login gate says when to retry',
      new ErrLoginBusy(),
      { status: 429, message: 'too many login attempts', headers: { 'retry-after': '1' } },
    ],
    [
      'a backend outage is expected but logged for the operator',
      new ErrUnavailable(OUTAGE),
      { status: 500, message: 'internal server error', headers: {} },
    ],
  ])('%s', (_label, error, answer) => {
    const capture = new LogCapture();
    expect(httpErrorAnswer(error, createLogger('debug', capture), '/orders')).toStrictEqual(answer);
    const logged = error instanceof ErrUnavailable ? [{ msg: 'api: backend unavailable', err: OUTAGE, path: '/orders' }] : [];
    expect(capture.lines).toMatchObject(logged);
  });

  it('HTTP/2 forbids Connection: there the stream alone ends', () => {
    expect(httpErrorAnswer(new ErrBodyTooLarge(), createLogger('debug', new LogCapture()), '/', true).headers).toStrictEqual({});
  });

  it('anything else is rethrown, unlogged, for the recovery step to log once and mask', () => {
    const capture = new LogCapture();
    const bug = new TypeError('x');
    expect(() => httpErrorAnswer(bug, createLogger('debug', capture), '/')).toThrow(bug);
    expect(capture.lines).toEqual([]);
  });
});
