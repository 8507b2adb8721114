import { describe, expect, it } from 'vitest';
import { ErrMissingCredentials, authenticate } from './authenticate.ts';
import { TokenService } from './token-service.ts';

const SECRET = 'a-test-signing-secret-of-32-bytes!!';
const USER = '6f1c2a4e-0b7d-4c1e-9a35-2f8e1d0c9b77';
const tokens = new TokenService(SECRET, 3_600_000);

async function failure(header: string | undefined): Promise<unknown> {
  return authenticate(header, tokens).then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('authenticate (spec 5 rules 3-6)', () => {
  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['Basic x', 'Basic x'],
    ['lower-case bearer', 'bearer x'],
    ['upper-case BEARER', 'BEARER x'],
    ['the bare word', 'Bearer'],
    ['the word and one space', 'Bearer '],
    ['no space', 'Bearerx'],
    ['leading space', ' Bearer x'],
  ])('%s → ErrMissingCredentials `missing or malformed Authorization header`', async (_name, header) => {
    const error = await failure(header);
    expect(error).toBeInstanceOf(ErrMissingCredentials);
    expect((error as Error).message).toBe('missing or malformed Authorization header');
  });

  it('success: the principal carries the verified claims and the session key is claims.sub', async () => {
    const principal = await authenticate(`Bearer ${await tokens.issue(USER, 'alice')}`, tokens);
    expect(principal.userId).toBe(USER);
    expect(principal.claims.sub).toBe(USER);
    expect(principal.claims.name).toBe('alice');
    expect(principal.sessionKey).toBe(principal.claims.sub);
  });
});
