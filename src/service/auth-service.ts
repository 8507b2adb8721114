import { ErrInvalidCredentials } from '../domain/errors.ts';
import type { CredentialStore } from '../ports/credential-store.ts';
import { hashPassword, verifyPassword } from './password-hasher.ts';
import type { TokenService } from './token-service.ts';

/**
 * Login (spec 5 rule 2). An unknown user is checked against a dummy hash, so it costs the same scrypt
 * as a wrong password and both give the same ErrInvalidCredentials: timing does not reveal which
 * usernames exist.
 */
export class AuthService {
  readonly #credentials: CredentialStore;
  readonly #tokens: TokenService;
  readonly #dummyHash: Promise<string>;

  constructor(credentials: CredentialStore, tokens: TokenService) {
    this.#credentials = credentials;
    this.#tokens = tokens;
    this.#dummyHash = hashPassword('not a password of anyone');
  }

  async login(username: string, password: string): Promise<string> {
    const user = username === '' ? undefined : await this.#credentials.findByUsername(username);
    const matches = await verifyPassword(password, user?.passwordHash ?? (await this.#dummyHash));
    if (user === undefined || !matches) throw new ErrInvalidCredentials();
    return this.#tokens.issue(user.id, user.username);
  }
}
