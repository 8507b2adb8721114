import { SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../config/service-config.ts';
import { ErrInvalidToken, TokenService } from './token-service.ts';

const SECRET = 'a-test-signing-secret-of-32-bytes!!';
const OTHER_SECRET = 'another-signing-secret-of-32-bytes';
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
  it('round-trips an HS256 token carrying sub, name, iat and exp', async () => {
    const service = new TokenService(SECRET, HOUR_MS, at(T0));
    const token = await service.issue(USER, 'alice');
    expect(decodeProtectedHeader(token).alg).toBe('HS256');
    const claims = await service.verify(token);
    expect(claims).toStrictEqual({ sub: USER, name: 'alice', iat: T0 / 1000, exp: T0 / 1000 + 3600 });
  });

  it('refuses an expired token as ErrInvalidToken (clock injected)', async () => {
    const token = await new TokenService(SECRET, HOUR_MS, at(T0)).issue(USER, 'alice');
    await expect(new TokenService(SECRET, HOUR_MS, at(T0 + HOUR_MS - 1000)).verify(token)).resolves.toMatchObject({ sub: USER });
    await expectInvalid(new TokenService(SECRET, HOUR_MS, at(T0 + HOUR_MS + 1000)), token);
  });

  it('refuses a token signed with another secret', async () => {
    const token = await new TokenService(OTHER_SECRET, HOUR_MS, at(T0)).issue(USER, 'alice');
    await expectInvalid(new TokenService(SECRET, HOUR_MS, at(T0)), token);
  });

  it('pins the algorithm: an unsigned `alg: none` token is refused', async () => {
    const service = new TokenService(SECRET, HOUR_MS, at(T0));
    const payload = { sub: USER, name: 'alice', iss: 'orders', iat: T0 / 1000, exp: T0 / 1000 + 3600 };
    const handMade = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;
    await expectInvalid(service, handMade);
    const viaJose = new UnsecuredJWT({ name: 'alice' }).setSubject(USER).setIssuer('orders').setIssuedAt(T0 / 1000).setExpirationTime(T0 / 1000 + 3600).encode();
    await expectInvalid(service, viaJose);
  });

  it('pins the algorithm: an HS512 token signed with the same secret is refused', async () => {
    const service = new TokenService(SECRET, HOUR_MS, at(T0));
    const hs512 = await new SignJWT({ name: 'alice' })
      .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
      .setSubject(USER)
      .setIssuer('orders')
      .setIssuedAt(T0 / 1000)
      .setExpirationTime(T0 / 1000 + 3600)
      .sign(new TextEncoder().encode(SECRET));
    await expectInvalid(service, hs512);
  });

  it('refuses a tampered payload (signature no longer matches)', async () => {
    const service = new TokenService(SECRET, HOUR_MS, at(T0));
    const [header, payload, signature] = (await service.issue(USER, 'alice')).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = b64url({ ...claims, sub: '00000000-0000-0000-0000-000000000000' });
    await expectInvalid(service, `${header}.${forged}.${signature}`);
  });

  it.each(['', 'garbage', 'a.b.c', 'a.b', '...'])('refuses the malformed token %j as ErrInvalidToken', async (token) => {
    await expectInvalid(new TokenService(SECRET, HOUR_MS, at(T0)), token);
  });

  it('refuses a correctly signed token without the claims it issues (no name, wrong issuer)', async () => {
    const service = new TokenService(SECRET, HOUR_MS, at(T0));
    const key = new TextEncoder().encode(SECRET);
    const noName = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(USER).setIssuer('orders').setIssuedAt(T0 / 1000).setExpirationTime(T0 / 1000 + 60).sign(key);
    await expectInvalid(service, noName);
    const otherIssuer = await new SignJWT({ name: 'alice' }).setProtectedHeader({ alg: 'HS256' }).setSubject(USER).setIssuer('someone-else').setIssuedAt(T0 / 1000).setExpirationTime(T0 / 1000 + 60).sign(key);
    await expectInvalid(service, otherIssuer);
  });

  it('refuses a secret shorter than 32 bytes, naming JWT_SECRET and never echoing the secret', () => {
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
  });

  it('counts the secret in bytes, not characters', () => {
    expect(() => new TokenService('x'.repeat(32), HOUR_MS)).not.toThrow();
    // 11 three-byte characters: 11 characters, 33 bytes.
    expect(() => new TokenService('€'.repeat(11), HOUR_MS)).not.toThrow();
    // 10 three-byte characters: 30 bytes.
    expect(() => new TokenService('€'.repeat(10), HOUR_MS)).toThrow('JWT_SECRET');
  });

  it('takes its default lifetime from JWT_EXPIRY: 1h when unset, 30m when set', async () => {
    const unset = loadServiceConfig({ JWT_SECRET: SECRET }, { embedded: false });
    expect(unset.tokens.expiryMs).toBe(HOUR_MS);
    const hourToken = decodeJwt(await new TokenService(unset.tokens.secret, unset.tokens.expiryMs, at(T0)).issue(USER, 'alice'));
    expect((hourToken.exp as number) - (hourToken.iat as number)).toBe(3600);

    const thirty = loadServiceConfig({ JWT_SECRET: SECRET, JWT_EXPIRY: '30m' }, { embedded: false });
    const shortToken = decodeJwt(await new TokenService(thirty.tokens.secret, thirty.tokens.expiryMs, at(T0)).issue(USER, 'alice'));
    expect((shortToken.exp as number) - (shortToken.iat as number)).toBe(1800);
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

    async function signed(claims: { iat: number; exp: number }): Promise<string> {
      return new SignJWT({ name: 'alice' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(USER)
        .setIssuer('orders')
        .setIssuedAt(claims.iat)
        .setExpirationTime(claims.exp)
        .sign(new TextEncoder().encode(SECRET));
    }

    it('refuses an iat in the future beyond the leeway, accepts one within it', async () => {
      const service = new TokenService(SECRET, HOUR_MS, at(T0));
      const now = T0 / 1000;
      await expectInvalid(service, await signed({ iat: now + 31, exp: now + 31 + 3600 }));
      await expect(service.verify(await signed({ iat: now + 30, exp: now + 30 + 3600 }))).resolves.toMatchObject({ sub: USER });
    });

    it('refuses a lifetime longer than JWT_EXPIRY, accepts one up to it', async () => {
      const service = new TokenService(SECRET, HOUR_MS, at(T0));
      const now = T0 / 1000;
      await expectInvalid(service, await signed({ iat: now, exp: now + 3601 }));
      await expectInvalid(service, await signed({ iat: now - 86_400, exp: now + 60 }));
      await expect(service.verify(await signed({ iat: now, exp: now + 3600 }))).resolves.toMatchObject({ sub: USER });
      await expect(service.verify(await signed({ iat: now, exp: now + 60 }))).resolves.toMatchObject({ sub: USER });
    });
  });
});
