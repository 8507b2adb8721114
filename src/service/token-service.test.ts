import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { ErrInvalidToken, TokenService } from './token-service.ts';

const SECRET = 'a-test-signing-secret-of-32-bytes!!';
const HOUR_MS = 3_600_000;
const T0 = Date.parse('2025-03-01T12:00:00Z');
const USER = '6f1c2a4e-0b7d-4c1e-9a35-2f8e1d0c9b77';

function at(ms: number): () => number {
  return () => ms;
}

async function expectInvalid(service: TokenService, token: string): Promise<void> {
  const error = await service.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ErrInvalidToken);
  expect((error as Error).message).toBe('invalid or expired token');
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('TokenService (spec 5 rules 1, 7)', () => {
  it.each(['', 'garbage', 'a.b.c', 'a.b', '...'])('refuses the malformed token %j as ErrInvalidToken', async (token) => {
    await expectInvalid(new TokenService(SECRET, HOUR_MS, at(T0)), token);
  });

  it('refuses a secret shorter than 32 bytes (counted in bytes), naming JWT_SECRET and never echoing the secret', () => {
    const short = 'short-secret-value-31-bytes-xxxx'.slice(0, 31);
    expect(Buffer.byteLength(short)).toBe(31);
    let thrown: unknown;
    try {
      new TokenService(short, HOUR_MS);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    const message = (thrown as Error).message;
    expect(message).toContain('JWT_SECRET');
    expect(message).not.toContain(short);
    expect(message).not.toContain(short.slice(0, 8));
    expect(() => new TokenService('', HOUR_MS)).toThrow('JWT_SECRET');
    expect(() => new TokenService('x'.repeat(32), HOUR_MS)).not.toThrow();
    // 11 three-byte characters: 11 characters, 33 bytes; 10 of them are 30 bytes.
    expect(() => new TokenService('€'.repeat(11), HOUR_MS)).not.toThrow();
    expect(() => new TokenService('€'.repeat(10), HOUR_MS)).toThrow('JWT_SECRET');
  });

  it('a verified token stays cached only until its own expiry (the cache never extends a token)', async () => {
    let now = T0;
    const service = new TokenService(SECRET, HOUR_MS, () => now);
    const token = await service.issue(USER, 'alice');
    await expect(service.verify(token)).resolves.toMatchObject({ sub: USER });
    now = T0 + HOUR_MS - 1000;
    await expect(service.verify(token)).resolves.toMatchObject({ sub: USER });
    now = T0 + HOUR_MS;
    await expectInvalid(service, token);
  });

  it('caches successes only: a token failing once fails every time, a tampered copy of a cached token fails', async () => {
    const service = new TokenService(SECRET, HOUR_MS, at(T0));
    const token = await service.issue(USER, 'alice');
    await service.verify(token);
    const [header, , signature] = token.split('.');
    const forged = `${header}.${b64url({ sub: 'someone-else', name: 'mallory', iss: 'orders', iat: T0 / 1000, exp: T0 / 1000 + 3600 })}.${signature}`;
    await expectInvalid(service, forged);
    await expectInvalid(service, forged);
    await expectInvalid(service, `${token}x`);
  });

  describe('one token, one text (issue 12; RFC 7515 §2, RFC 8725)', () => {
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    /** The same bytes in another text: the last character with its unused low bits set. */
    function lowBitsChanged(segment: string): string {
      const unused = segment.length % 4 === 2 ? 0b1111 : 0b11;
      const last = ALPHABET.indexOf(segment.at(-1)!);
      return segment.slice(0, -1) + ALPHABET[last | unused];
    }

    it('refuses padding and non-canonical last characters, before and after the token is cached', async () => {
      const service = new TokenService(SECRET, HOUR_MS, at(T0));
      const token = await service.issue(USER, 'alice');
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const variants = [
        `${token}=`,
        `${token}==`,
        `${header}.${payload}.${lowBitsChanged(signature)}`,
        ...(payload.length % 4 === 0 ? [] : [`${header}.${lowBitsChanged(payload)}.${signature}`]),
        ...(header.length % 4 === 0 ? [] : [`${lowBitsChanged(header)}.${payload}.${signature}`]),
        `${header}.${payload}.${signature.replaceAll('-', '+').replaceAll('_', '/')}`,
      ].filter((variant) => variant !== token);
      expect(variants.length).toBeGreaterThanOrEqual(3);
      // The bytes really are the same: only the text differs (otherwise this would test tampering).
      expect(Buffer.from(lowBitsChanged(signature), 'base64url')).toStrictEqual(Buffer.from(signature, 'base64url'));
      for (const variant of variants) await expectInvalid(service, variant);
      await expect(service.verify(token)).resolves.toMatchObject({ sub: USER });
      for (const variant of variants) await expectInvalid(service, variant);
    });

    async function signed(claims: { alg?: string; name?: string; iss?: string; iat: number; exp: number }): Promise<string> {
      return new SignJWT(claims.name === undefined ? {} : { name: claims.name })
        .setProtectedHeader({ alg: claims.alg ?? 'HS256', typ: 'JWT' })
        .setSubject(USER)
        .setIssuer(claims.iss ?? 'orders')
        .setIssuedAt(claims.iat)
        .setExpirationTime(claims.exp)
        .sign(new TextEncoder().encode(SECRET));
    }

    const now = T0 / 1000;
    it.each([
      ['HS512 with the same secret (the algorithm is pinned)', { alg: 'HS512', name: 'alice', iat: now, exp: now + 3600 }],
      ['no name claim', { iat: now, exp: now + 60 }],
      ['another issuer', { name: 'alice', iss: 'someone-else', iat: now, exp: now + 60 }],
      ['iat in the future beyond the leeway', { name: 'alice', iat: now + 31, exp: now + 31 + 3600 }],
      ['a lifetime longer than JWT_EXPIRY', { name: 'alice', iat: now, exp: now + 3601 }],
      ['an iat a day old', { name: 'alice', iat: now - 86_400, exp: now + 60 }],
    ])('refuses a correctly signed token not shaped as it issues: %s', async (_label, claims) => {
      await expectInvalid(new TokenService(SECRET, HOUR_MS, at(T0)), await signed(claims));
    });

    it.each([
      ['iat in the future within the leeway', { name: 'alice', iat: now + 30, exp: now + 30 + 3600 }],
      ['a lifetime of exactly JWT_EXPIRY', { name: 'alice', iat: now, exp: now + 3600 }],
      ['a shorter lifetime', { name: 'alice', iat: now, exp: now + 60 }],
    ])('accepts %s', async (_label, claims) => {
      await expect(new TokenService(SECRET, HOUR_MS, at(T0)).verify(await signed(claims))).resolves.toMatchObject({ sub: USER });
    });
  });
});
