/** Where users and their password hashes live (rule AUTH-10-credentials): PostgreSQL, or the in-memory fake. */
import type { User } from '../domain/user.ts';

export interface CredentialStore {
  findByUsername(username: string): Promise<User | undefined>;
  /** Fails with ErrConflict when the username is taken. */
  add(user: User): Promise<void>;
}
