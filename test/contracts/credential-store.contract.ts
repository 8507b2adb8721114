import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { ErrConflict } from '../../src/domain/errors.ts';
import type { User } from '../../src/domain/user.ts';
import type { CredentialStore } from '../../src/ports/credential-store.ts';

export type CredentialStoreFactory = () => CredentialStore | Promise<CredentialStore>;

/** Usernames are random per case, so implementations may share one database across cases. */
export function credentialStoreContract(name: string, factory: CredentialStoreFactory): void {
  describe(`CredentialStore contract/${name}`, () => {
    let store: CredentialStore;
    beforeEach(async () => {
      store = await factory();
    });

    function user(fields: Partial<User> = {}): User {
      return { id: randomUUID(), username: `user-${randomUUID()}`, passwordHash: `scrypt$16384$8$1$salt$${randomUUID()}`, ...fields };
    }

    it('add then findByUsername returns that user', async () => {
      const a = user();
      const b = user();
      await store.add(a);
      await store.add(b);
      expect(await store.findByUsername(a.username)).toEqual(a);
      expect(await store.findByUsername(b.username)).toEqual(b);
    });

    it('findByUsername of an unknown username is undefined', async () => {
      expect(await store.findByUsername(`nobody-${randomUUID()}`)).toBeUndefined();
    });

    it('[ERR-invalid-credentials] findByUsername of a name with a NUL character is undefined, not a failure', async () => {
      expect(await store.findByUsername('a\u0000b')).toBeUndefined();
    });

    it('a duplicate username or user id is rejected with ErrConflict and the first user is kept', async () => {
      const first = user();
      await store.add(first);
      await expect(store.add(user({ username: first.username }))).rejects.toBeInstanceOf(ErrConflict);
      const sameId = user({ id: first.id });
      await expect(store.add(sameId)).rejects.toBeInstanceOf(ErrConflict);
      expect(await store.findByUsername(first.username)).toEqual(first);
      expect(await store.findByUsername(sameId.username)).toBeUndefined();
    });
  });
}
