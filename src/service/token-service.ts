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

/**
 * HS256 tokens (spec 5 rule 1), independent of any transport (rule 7). The algorithm is pinned on
 * verification so a token cannot choose its own (`alg: none`, RS/HS confusion).
 */
export class TokenService {
  readonly #key: Uint8Array;
  readonly #lifetimeMs: number;
  readonly #now: () => number;

  constructor(secret: string, lifetimeMs: number, now: () => number = Date.now) {
    const key = new TextEncoder().encode(secret);
    if (key.byteLength < MIN_SECRET_BYTES) {
      throw new RangeError(`JWT_SECRET must be at least ${MIN_SECRET_BYTES} bytes`);
    }
    this.#key = key;
    this.#lifetimeMs = lifetimeMs;
    this.#now = now;
  }

  async issue(userId: string, username: string): Promise<string> {
    const iat = Math.floor(this.#now() / 1000);
    return new SignJWT({ name: username })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(ISSUER)
      .setIssuedAt(iat)
      .setExpirationTime(iat + Math.max(1, Math.round(this.#lifetimeMs / 1000)))
      .sign(this.#key);
  }

  async verify(token: string): Promise<Claims> {
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: new Date(this.#now()),
      });
      if (typeof payload.sub !== 'string' || payload.sub === '' || typeof payload['name'] !== 'string') {
        throw new ErrInvalidToken();
      }
      return { sub: payload.sub, name: payload['name'], exp: payload.exp as number, iat: payload.iat as number };
    } catch (error) {
      if (error instanceof ErrInvalidToken || error instanceof joseErrors.JOSEError || error instanceof TypeError) {
        throw new ErrInvalidToken();
      }
      throw error;
    }
  }
}
