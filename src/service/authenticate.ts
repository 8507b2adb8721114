/**
 * The one authentication step, shared by every transport: the HTTP header and gRPC `authorization` metadata
 * carry the same `Bearer <token>` form (spec 5 rules 3-6: exactly one space, `Bearer` case-sensitive, a
 * non-empty token). The principal it yields goes into the call context (spec 5 rule 6).
 */
import { namedError } from '../domain/named-error.ts';
import { sessionKeyFromVerifiedSubject, type SessionKey } from '../domain/session-key.ts';
import type { Claims, TokenService } from './token-service.ts';

export interface Principal {
  readonly userId: string;
  readonly claims: Claims;
  readonly sessionKey: SessionKey;
}

export class ErrMissingCredentials extends namedError('ErrMissingCredentials', 'missing or malformed Authorization header') {}

const BEARER_PREFIX = 'Bearer ';

export async function authenticate(authorization: string | undefined, tokens: TokenService): Promise<Principal> {
  if (authorization === undefined || !authorization.startsWith(BEARER_PREFIX)) throw new ErrMissingCredentials();
  const token = authorization.slice(BEARER_PREFIX.length);
  if (token === '') throw new ErrMissingCredentials();
  const claims = await tokens.verify(token);
  return { userId: claims.sub, claims, sessionKey: sessionKeyFromVerifiedSubject(claims.sub) };
}
