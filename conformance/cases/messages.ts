import { request, type BodyExpect, type Expectation, type HttpExpect, type RequestCase } from '../case-model.ts';
import type { RawRequest } from '../drivers/driver.ts';

/** Spec 7 texts, written out here rather than imported, so the suite does not check the code against itself. */
export const MSG = {
  malformedBody: 'malformed request body',
  invalidOrderId: 'invalid order id',
  missingAuth: 'missing or malformed Authorization header',
  invalidToken: 'invalid or expired token',
  invalidCredentials: 'invalid credentials',
  forbidden: 'forbidden',
  notFound: 'not found',
  tooLarge: 'request body too large',
  rateLimited: 'rate limit exceeded',
  internal: 'internal server error',
  sessionUnavailable: 'session unavailable',
  methodNotAllowed: 'method not allowed',
  itemRequired: 'item is required',
  itemTooLong: 'item must be at most 200 characters',
  itemNul: 'item must not contain NUL characters',
  itemSurrogate: 'item must not contain unpaired UTF-16 surrogates',
  malformedMessage: 'malformed request message',
  quantityPositive: 'quantity must be a positive integer',
  quantityTooLarge: 'quantity must be at most 2147483647',
  loginFieldsRequired: 'username and password are required',
} as const;

/** 401 on REST, UNAUTHENTICATED on gRPC, same text (our choice for spec 7 rule 5). */
export function unauthenticated(message: string): Expectation {
  return { http: { status: 401, error: message }, grpc: { code: 'UNAUTHENTICATED', message } };
}

export function invalidArgument(message: string): Expectation {
  return { http: { status: 400, error: message }, grpc: { code: 'INVALID_ARGUMENT', message } };
}

/** 500 with the masked text on both APIs (spec 7: the cause never reaches the client). */
export const INTERNAL: Expectation = { http: { status: 500, error: MSG.internal }, grpc: { code: 'INTERNAL', message: MSG.internal } };

/** 400 malformed body: REST only, protobuf has no undecodable JSON. */
export const MALFORMED: Expectation = { http: { status: 400, error: MSG.malformedBody } };

/** A REST-only raw request case: one exchange and its expected answer. `auth` sends that header (placeholders resolved). */
export function restCase(name: string, rules: readonly string[], input: RawRequest, http: HttpExpect, auth?: string): RequestCase {
  return request(name, rules, { op: 'raw', ...(auth === undefined ? {} : { auth }), input }, { http });
}

/** Success on both APIs, nothing more checked. */
export const OK: Expectation = { http: { status: 200 }, grpc: { code: 'OK' } };
export const CREATED: Expectation = { http: { status: 201 }, grpc: { code: 'OK' } };

/** Success with this body on both APIs (REST status 200 unless given). */
export function answers(body: BodyExpect, status = 200): Expectation {
  return { http: { status, body }, grpc: { code: 'OK', body } };
}

/** A RecentResponse holding exactly these ids, in this order, on both APIs. */
export function recentIs(ids: readonly string[]): Expectation {
  return answers({ shape: 'RecentResponse', recent: ids });
}

/** `{order:ref-i}` placeholders for i from `from` down to `to` (setup orders created with a count). */
export function refs(ref: string, from: number, to: number): string[] {
  return Array.from({ length: from - to + 1 }, (_, k) => `{order:${ref}-${from - k}}`);
}
