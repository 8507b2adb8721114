import { namedError } from '../domain/named-error.ts';
import { sessionKeyFromVerifiedSubject, type SessionKey } from '../domain/session-key.ts';
import type { Claims, TokenService } from './token-service.ts';

/** Who is calling: verified claims and the session key, placed in the call context (spec 5 rule 6). */
export interface Principal {
  readonly userId: string;
  readonly claims: Claims;
  readonly sessionKey: SessionKey;
}

export class ErrMissingCredentials extends namedError('ErrMissingCredentials', 'missing or malformed Authorization header') {}

const BEARER_PREFIX = 'Bearer ';

/**
 * The one authentication step, shared by every transport (HTTP header and gRPC `authorization`
 * metadata carry the same `Bearer <token>` form). Spec 5 rules 3-6: exactly one space, the word
 * `Bearer` case-sensitive, a non-empty token.
 */
export async function authenticate(authorization: string | undefined, tokens: TokenService): Promise<Principal> {
  if (authorization === undefined || !authorization.startsWith(BEARER_PREFIX)) throw new ErrMissingCredentials();
  const token = authorization.slice(BEARER_PREFIX.length);
  if (token === '') throw new ErrMissingCredentials();
  const claims = await tokens.verify(token);
  return { userId: claims.sub, claims, sessionKey: sessionKeyFromVerifiedSubject(claims.sub) };
}
