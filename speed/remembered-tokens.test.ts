import { webcrypto } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { ErrInvalidToken } from '../src/service/token-service.ts';
import { RememberedTokens } from './remembered-tokens.ts';

const SECRET = 'a-test-signing-secret-of-32-bytes!!';
const HOUR_MS = 3_600_000;
const T0 = Date.parse('2025-03-01T12:00:00Z');
const USER = '6f1c2a4e-0b7d-4c1e-9a35-2f8e1d0c9b77';

async function expectInvalid(service: RememberedTokens, token: string): Promise<void> {
  const error = await service.verify(token).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ErrInvalidToken);
  expect((error as Error).message).toBe('invalid or expired token');
}

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('RememberedTokens (speed ring)', () => {
  it('[AUTH-5-invalid, AUTH-token-canonical] remembers successes only: a forgery or another text of a remembered token still fails', async () => {
    const service = new RememberedTokens(SECRET, HOUR_MS, () => T0);
    const token = await service.issue(USER, 'alice');
    await service.verify(token);
    const [header, , signature] = token.split('.');
    const forged = `${header}.${b64url({ sub: 'someone-else', name: 'mallory', iss: 'orders', iat: T0 / 1000, exp: T0 / 1000 + 3600 })}.${signature}`;
    await expectInvalid(service, forged);
    await expectInvalid(service, forged);
    await expectInvalid(service, `${token}x`);
    await expectInvalid(service, `${token}=`);
  });

  it('[AUTH-1-hs256] a remembered token is answered without checking its signature again until its exp, then forgotten', async () => {
    let clock = T0;
    const service = new RememberedTokens(SECRET, HOUR_MS, () => clock);
    const token = await service.issue(USER, 'alice');
    const other = await service.issue(USER, 'alice-again');
    const signatureChecks = vi.spyOn(webcrypto.subtle, 'verify');
    try {
      for (let i = 0; i < 3; i++) await expect(service.verify(token)).resolves.toMatchObject({ sub: USER, name: 'alice' });
      expect(signatureChecks).toHaveBeenCalledTimes(1);
      clock = T0 + HOUR_MS - 1_000;
      await expect(service.verify(token)).resolves.toMatchObject({ sub: USER, name: 'alice' });
      expect(signatureChecks).toHaveBeenCalledTimes(1);
      // Remembered per exact text: another token is checked on its own.
      await expect(service.verify(other)).resolves.toMatchObject({ name: 'alice-again' });
      expect(signatureChecks).toHaveBeenCalledTimes(2);
      clock = T0 + HOUR_MS;
      await expectInvalid(service, token);
      // Refused once, forgotten: should the clock step back, the token is checked anew, not answered from memory.
      const checksBefore = signatureChecks.mock.calls.length;
      clock = T0 + HOUR_MS - 1_000;
      await expect(service.verify(token)).resolves.toMatchObject({ sub: USER, name: 'alice' });
      expect(signatureChecks).toHaveBeenCalledTimes(checksBefore + 1);
    } finally {
      signatureChecks.mockRestore();
    }
  });
});
