/**
 * HS256 tokens (spec 5 rule 1), independent of any transport (rule 7). The algorithm is pinned on
 * verification so a token cannot choose its own (`alg: none`, RS/HS confusion).
 */
import { webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { namedError } from '../domain/named-error.ts';

/** Claims we put in a token (spec 5 rule 11 leaves the set to us): sub = user id, name = username. */
export interface Claims {
  readonly sub: string;
  readonly name: string;
  readonly exp: number;
  readonly iat: number;
}

/** Deliberately carries no detail of the token or the secret. */
export class ErrInvalidToken extends namedError('ErrInvalidToken', 'invalid or expired token') {}

export const MIN_SECRET_BYTES = 32;
const ALGORITHM = 'HS256';
const ISSUER = 'orders';
/** Clock difference tolerated between replicas for `iat` (rule AUTH-token-canonical). */
export const IAT_LEEWAY_S = 30;

/**
 * Canonical base64url segments (RFC 7515 §2, RFC 4648 §3.5), so one token has exactly one text (rule
 * AUTH-token-canonical): padding, `+`/`/`, or changed unused low bits decode to the same bytes and would
 * otherwise verify. A segment is canonical when its bytes encode back to it; the segment count is jose's.
 */
function isCanonicalCompact(token: string): boolean {
  return token.split('.').every((segment) => Buffer.from(segment, 'base64url').toString('base64url') === segment);
}

export class TokenService {
  /** Imported once: jose would otherwise import the raw secret into WebCrypto on every call. */
  readonly #key: Promise<webcrypto.CryptoKey>;
  readonly #lifetimeS: number;
  readonly #now: () => number;

  constructor(secret: string, lifetimeMs: number, now: () => number = Date.now) {
    const key = new TextEncoder().encode(secret);
    if (key.byteLength < MIN_SECRET_BYTES) throw new RangeError(`JWT_SECRET must be at least ${MIN_SECRET_BYTES} bytes`);
    this.#key = webcrypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    this.#lifetimeS = Math.max(1, Math.round(lifetimeMs / 1000));
    this.#now = now;
  }

  async issue(userId: string, username: string): Promise<string> {
    const iat = Math.floor(this.#now() / 1000);
    return new SignJWT({ name: username })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(ISSUER)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.#lifetimeS)
      .sign(await this.#key);
  }

  async verify(token: string): Promise<Claims> {
    if (!isCanonicalCompact(token)) throw new ErrInvalidToken();
    try {
      const { payload } = await jwtVerify(token, await this.#key, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: new Date(this.#now()),
      });
      if (typeof payload.sub !== 'string' || payload.sub === '' || typeof payload['name'] !== 'string') {
        throw new ErrInvalidToken();
      }
      const exp = payload.exp as number;
      const iat = payload.iat as number;
      // Only tokens as this service issues them: not from the future, not living longer than JWT_EXPIRY.
      if (iat > this.#now() / 1000 + IAT_LEEWAY_S || exp - iat > this.#lifetimeS) throw new ErrInvalidToken();
      return { sub: payload.sub, name: payload['name'], exp, iat };
    } catch (error) {
      if (error instanceof ErrInvalidToken || error instanceof joseErrors.JOSEError || error instanceof TypeError) {
        throw new ErrInvalidToken();
      }
      throw error;
    }
  }
}
