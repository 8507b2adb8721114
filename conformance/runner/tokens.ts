import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';

function decodeSegment(token: string, index: number): Record<string, unknown> {
  const segment = token.split('.')[index];
  if (segment === undefined) throw new Error('not a JWT');
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** The claims of a token, unverified: tests read `sub` to name the user (spec 5 rule 6). */
export const decodeClaims = (token: string): Record<string, unknown> => decodeSegment(token, 1);
export const decodeHeader = (token: string): Record<string, unknown> => decodeSegment(token, 0);

export interface MintOptions {
  readonly secret: string;
  readonly sub: string;
  readonly name: string;
  /** Seconds relative to now. */
  readonly iatOffset: number;
  readonly expOffset: number;
  readonly issuer?: string;
}

/** A token as the service would sign it, with chosen times: expired tokens without waiting. */
export async function mintToken(options: MintOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ name: options.name })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.sub)
    .setIssuer(options.issuer ?? 'orders')
    .setIssuedAt(now + options.iatOffset)
    .setExpirationTime(now + options.expOffset)
    .sign(new TextEncoder().encode(options.secret));
}

/** Valid shape and claims, signed with a secret the service does not know. */
export function foreignToken(sub: string, name: string): Promise<string> {
  return mintToken({ secret: randomBytes(32).toString('base64url'), sub, name, iatOffset: 0, expOffset: 3600 });
}

/** The same claims with `alg: none` and no signature: must never verify. */
export function unsignedToken(token: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
  return `${header}.${token.split('.')[1] ?? ''}.`;
}

/** A valid token whose payload was changed after signing. */
export function tamperedToken(token: string): string {
  const [header, , signature] = token.split('.');
  const claims = decodeClaims(token);
  const payload = Buffer.from(JSON.stringify({ ...claims, sub: crypto.randomUUID() })).toString('base64url');
  return `${header}.${payload}.${signature}`;
}
