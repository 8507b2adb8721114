import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../fakes/memory-store.ts';
import { ErrInvalidCredentials, ErrUnavailable } from '../domain/errors.ts';
import { AuthService } from './auth-service.ts';
import { hashPassword } from './password-hasher.ts';
import { TokenService } from './token-service.ts';

const SECRET = 'a-test-signing-secret-of-32-bytes!!';
const USER_ID = '6f1c2a4e-0b7d-4c1e-9a35-2f8e1d0c9b77';

/**
 * Counts the scrypt derivations done while a login runs, with their cost, by swapping node:crypto's
 * scrypt for a counting wrapper (syncBuiltinESMExports makes the swap visible to ESM named imports).
 * This asserts "the unknown user costs the same scrypt as a wrong password" structurally, not by timing.
 */
interface Derivation {
  readonly N: number | undefined;
  readonly r: number | undefined;
  readonly p: number | undefined;
}
const originalScrypt = crypto.scrypt;
let derivations: Derivation[] = [];

function installScryptCounter(): void {
  const counting = ((...args: unknown[]) => {
    const options = args[3] as { N?: number; r?: number; p?: number } | undefined;
    derivations.push({ N: options?.N, r: options?.r, p: options?.p });
    return (originalScrypt as (...a: unknown[]) => void)(...args);
  }) as typeof crypto.scrypt;
  crypto.scrypt = counting;
  syncBuiltinESMExports();
}

function restoreScrypt(): void {
  crypto.scrypt = originalScrypt;
  syncBuiltinESMExports();
}

async function setup(): Promise<{ auth: AuthService; store: MemoryStore; tokens: TokenService }> {
  const store = new MemoryStore();
  // The production cost, so the dummy hash and the user's hash cost the same.
  await store.add({ id: USER_ID, username: 'alice', passwordHash: await hashPassword('alice-password') });
  const tokens = new TokenService(SECRET, 3_600_000);
  const auth = new AuthService(store, tokens);
  // Let the constructor's dummy hash settle so it is not counted below.
  await auth.login('alice', 'alice-password');
  return { auth, store, tokens };
}

describe('AuthService.login (spec 5 rule 2)', () => {
  beforeEach(() => {
    derivations = [];
    installScryptCounter();
  });
  afterEach(restoreScrypt);

  it('an unknown user runs the same scrypt work as a wrong password (no username oracle by timing)', async () => {
    const { auth } = await setup();
    derivations = [];
    await expect(auth.login('alice', 'not-her-password')).rejects.toBeInstanceOf(ErrInvalidCredentials);
    const wrongPassword = derivations;
    derivations = [];
    await expect(auth.login('mallory', 'whatever')).rejects.toBeInstanceOf(ErrInvalidCredentials);
    const unknownUser = derivations;
    expect(wrongPassword).toHaveLength(1);
    expect(unknownUser).toStrictEqual(wrongPassword);
    expect(unknownUser[0]).toStrictEqual({ N: 16_384, r: 8, p: 1 });
  });

  it('with the store down: an empty username is invalid credentials after the same scrypt work, without asking the store; any other is an outage, not invalid credentials', async () => {
    const { auth, store } = await setup();
    store.trouble.down();
    derivations = [];
    await expect(auth.login('', 'alice-password')).rejects.toBeInstanceOf(ErrInvalidCredentials);
    expect(derivations).toStrictEqual([{ N: 16_384, r: 8, p: 1 }]);
    await expect(auth.login('alice', 'alice-password')).rejects.toBeInstanceOf(ErrUnavailable);
  });

  it("[AUTH-10-credentials] an unknown user is invalid credentials even with the dummy hash's own password", async () => {
    const { auth } = await setup();
    // The dummy password is in the source: matching it must not log anyone in as nobody.
    await expect(auth.login('mallory', 'not a password of anyone')).rejects.toBeInstanceOf(ErrInvalidCredentials);
  });
});
