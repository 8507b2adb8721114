import { createHmac } from 'node:crypto';
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
  const error = await service.verify(token).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ErrInvalidToken);
  expect((error as Error).message).toBe('invalid or expired token');
}

describe('TokenService (spec 5 rules 1, 7)', () => {
  it.each(['', 'garbage', 'a.b.c', 'a.b', '...'])('refuses the malformed token %j as ErrInvalidToken', async (token) => {
    await expectInvalid(new TokenService(SECRET, HOUR_MS, at(T0)), token);
  });

  // Not echoing the secret is the tagged CONFIG-no-secret-echo case in config/rules.test.ts.
  it('refuses a secret shorter than 32 bytes, counted in bytes, naming JWT_SECRET', () => {
    // '€' is three bytes: 10 of them are 30 bytes, 11 are 33.
    for (const secret of ['', 'x'.repeat(31), '€'.repeat(10)]) expect(() => new TokenService(secret, HOUR_MS)).toThrow('JWT_SECRET');
    for (const secret of ['x'.repeat(32), '€'.repeat(11)]) expect(() => new TokenService(secret, HOUR_MS)).not.toThrow();
  });

  // One token, one text (padding, non-canonical last characters: AUTH-token-canonical) is the
  // token-text-must-be-canonical conformance case; these are the claim shapes around its boundaries.
  describe('only tokens shaped as it issues them (rule AUTH-token-issued-shape; RFC 8725)', () => {
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

  describe('claims every token must carry (rules AUTH-1-hs256, AUTH-token-issued-shape)', () => {
    const now = T0 / 1000;
    /** A token signed with the right secret and `payload` as its only claims. */
    function raw(payload: Record<string, unknown>): Promise<string> {
      return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(SECRET));
    }
    const complete = { sub: USER, name: 'alice', iss: 'orders', iat: now, exp: now + 3600 };

    it('[AUTH-1-hs256] verifies to the subject and the username it was issued for', async () => {
      const service = new TokenService(SECRET, HOUR_MS, at(T0));
      await expect(service.verify(await service.issue(USER, 'alice'))).resolves.toEqual({
        sub: USER,
        name: 'alice',
        iat: now,
        exp: now + 3600,
      });
      await expect(service.verify(await raw(complete))).resolves.toMatchObject({ sub: USER, name: 'alice' });
    });

    it.each([
      ['without iat', { ...complete, iat: undefined }],
      ['without exp', { ...complete, exp: undefined }],
      ['without sub', { ...complete, sub: undefined }],
      ['with an empty sub', { ...complete, sub: '' }],
      ['without name', { ...complete, name: undefined }],
      ['with a name that is not a string', { ...complete, name: 7 }],
    ])('[AUTH-token-issued-shape] refuses a correctly signed token %s', async (_label, payload) => {
      const defined = Object.fromEntries(Object.entries(payload).filter(([, value]) => value !== undefined));
      await expectInvalid(new TokenService(SECRET, HOUR_MS, at(T0)), await raw(defined));
    });

    it('[AUTH-1-hs256] a verified token is refused from the second of its exp on', async () => {
      let clock = T0;
      const service = new TokenService(SECRET, HOUR_MS, () => clock);
      const token = await service.issue(USER, 'alice');
      await service.verify(token);
      clock = T0 + HOUR_MS - 1_000;
      await expect(service.verify(token)).resolves.toMatchObject({ sub: USER });
      clock = T0 + HOUR_MS;
      await expectInvalid(service, token);
      await expectInvalid(new TokenService(SECRET, HOUR_MS, () => clock), token);
    });
  });

  // The conformance case token-text-must-be-canonical sends `=` appended and changed low bits; these are the
  // other texts of the same bytes, and the shapes the canonical check leaves to jose (three non-empty segments).
  it('[AUTH-token-canonical, AUTH-5-invalid] only the text issued verifies: another alphabet, padding, another segment count or an empty segment is refused', async () => {
    const service = new TokenService(SECRET, HOUR_MS, at(T0));
    // A token whose text holds a `-` or `_` (the signature is random-looking; the clock is fixed, so this is deterministic).
    let token = '';
    for (let i = 0; !/[-_]/.test(token); i++) token = await service.issue(USER, `alice-${i}`);
    await expect(service.verify(token)).resolves.toMatchObject({ sub: USER });
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const hmac = (input: string): string => createHmac('sha256', SECRET).update(input).digest('base64url');
    const variants: [string, string][] = [
      ['standard base64 `+` and `/` for `-` and `_` (the same bytes)', token.replaceAll('-', '+').replaceAll('_', '/')],
      ['padding after the signature', `${token}=`],
      ['a space in a segment', `${header}.${payload} .${signature}`],
      ['a fourth segment', `${token}.${signature}`],
      ['two segments, signed', `${header}.${hmac(header)}`],
      ['an empty payload, signed', `${header}..${hmac(`${header}.`)}`],
      ['an empty signature', `${header}.${payload}.`],
      ['an empty header', `.${payload}.${signature}`],
    ];
    for (const [label, variant] of variants) {
      expect(variant, label).not.toBe(token);
      const error = await service.verify(variant).catch((e: unknown) => e);
      expect(error, label).toBeInstanceOf(ErrInvalidToken);
    }
  });

  it('[AUTH-5-invalid] a refusal is ErrInvalidToken by name and kind, and carries nothing of the token', async () => {
    const token = 'not.a-valid.token';
    const error = await new TokenService(SECRET, HOUR_MS, at(T0)).verify(token).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ErrInvalidToken', kind: 'ErrInvalidToken', message: 'invalid or expired token' });
    expect(`${String(error)} ${JSON.stringify(error)}`).not.toContain('a-valid');
  });

  it('[AUTH-token-issued-shape] refuses a correctly signed token whose sub is not a string', async () => {
    const now = T0 / 1000;
    const token = await new SignJWT({ sub: 7 as unknown as string, name: 'alice', iss: 'orders', iat: now, exp: now + 60 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(SECRET));
    await expectInvalid(new TokenService(SECRET, HOUR_MS, at(T0)), token);
  });

  it('[AUTH-5-invalid] a failure not of the token (the clock failing) is not answered as an invalid token', async () => {
    let broken = false;
    const service = new TokenService(SECRET, HOUR_MS, () => {
      if (broken) throw new Error('clock unavailable');
      return T0;
    });
    const token = await service.issue(USER, 'alice');
    broken = true;
    await expect(service.verify(token)).rejects.toThrow(new Error('clock unavailable'));
  });
});
