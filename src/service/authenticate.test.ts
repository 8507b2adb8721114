import { describe, expect, it } from 'vitest';
import { ErrMissingCredentials, authenticate } from './authenticate.ts';
import { TokenService } from './token-service.ts';

const SECRET = 'a-test-signing-secret-of-32-bytes!!';
const tokens = new TokenService(SECRET, 3_600_000);

describe('authenticate (spec 5 rules 3-6)', () => {
  // Absent, another scheme, `bearer`/`BEARER`, the bare word and `Bearer ` are the auth-<variant>-<op>
  // conformance cases (AUTH-3-exact-bearer, AUTH-4-missing) on every transport and operation; a valid
  // token's claims reaching the handlers is AUTH-6-context (two-tokens-one-session and every request case).
  it.each([
    ['empty', ''],
    ['no space', 'Bearerx'],
    ['leading space', ' Bearer x'],
    ['the word and its space, no token', 'Bearer '],
  ])('%s → ErrMissingCredentials `missing or malformed Authorization header`', async (_name, header) => {
    const error = await authenticate(header, tokens).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrMissingCredentials);
    expect((error as Error).message).toBe('missing or malformed Authorization header');
  });

  it('[AUTH-4-missing] an absent header is ErrMissingCredentials, by class, name and kind', async () => {
    const error = await authenticate(undefined, tokens).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrMissingCredentials);
    expect(error).toMatchObject({
      name: 'ErrMissingCredentials',
      kind: 'ErrMissingCredentials',
      message: 'missing or malformed Authorization header',
    });
  });
});
