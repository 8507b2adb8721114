import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from './password-hasher.ts';

/** A low cost keeps the test fast; the format and the checks are the same as at the production cost. */
const CHEAP = { N: 1024, r: 8, p: 1 };

describe('password hashes (rule SVC-credential-store)', () => {
  it('[SVC-credential-store] a hash verifies its own password and no other', async () => {
    const stored = await hashPassword('correct horse', CHEAP);
    expect(stored.split('$').slice(0, 4)).toEqual(['scrypt', '1024', '8', '1']);
    await expect(verifyPassword('correct horse', stored)).resolves.toBe(true);
    await expect(verifyPassword('correct horsE', stored)).resolves.toBe(false);
  });

  it('[SVC-credential-store] a malformed stored hash never matches and never throws, even for its password', async () => {
    const stored = await hashPassword('pw', CHEAP);
    const parts = stored.split('$');
    const malformed = [
      ['bcrypt', ...parts.slice(1)].join('$'), // another scheme, otherwise the very same hash
      parts.slice(0, 5).join('$'), // the key missing
      [...parts, 'extra'].join('$'),
      [...parts.slice(0, 5), parts[5]!.slice(0, 10)].join('$'), // a key of the wrong length
      ['scrypt', '1000', ...parts.slice(2)].join('$'), // a cost scrypt refuses (N not a power of two)
      ['scrypt', String(2 ** 20), '8', ...parts.slice(3)].join('$'), // a cost past maxmem
    ];
    for (const text of malformed) await expect(verifyPassword('pw', text)).resolves.toBe(false);
  });
});
