/** Users in PostgreSQL (spec 5 rule 2's credential store); written by the operator CLI, read at login. */
import type { User } from '../../domain/user.ts';
import type { CredentialStore } from '../../ports/credential-store.ts';
import { translatePgError } from './errors.ts';
import type { Queryable } from './database.ts';

interface UserRow {
  id: string;
  username: string;
  password_hash: string;
}

export class PostgresCredentialStore implements CredentialStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async findByUsername(username: string): Promise<User | undefined> {
    // PostgreSQL text cannot hold NUL (the query would fail with 22021, a 500 for a login): no user has such a name.
    if (username.includes('\u0000')) return undefined;
    try {
      const { rows } = await this.#db.query<UserRow>('SELECT id, username, password_hash FROM users WHERE username = $1', [username]);
      const row = rows[0];
      return row === undefined ? undefined : { id: row.id, username: row.username, passwordHash: row.password_hash };
    } catch (error) {
      throw translatePgError(error, 'find user');
    }
  }

  /** The operator CLI's `users set-password`: false when there is no such user. */
  async setPasswordHash(username: string, passwordHash: string): Promise<boolean> {
    try {
      const { rowCount } = await this.#db.query('UPDATE users SET password_hash = $2 WHERE username = $1', [username, passwordHash]);
      return rowCount === 1;
    } catch (error) {
      throw translatePgError(error, 'set password');
    }
  }

  /** A taken username (users_username_key) or id surfaces as ErrConflict. */
  async add(user: User): Promise<void> {
    try {
      await this.#db.query('INSERT INTO users (id, username, password_hash) VALUES ($1, $2, $3)', [
        user.id,
        user.username,
        user.passwordHash,
      ]);
    } catch (error) {
      throw translatePgError(error, 'add user');
    }
  }
}
