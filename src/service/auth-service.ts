/**
 * Login (spec 5 rule 2). An unknown user is checked against a dummy hash, so it costs the same scrypt as a
 * wrong password and both give the same ErrInvalidCredentials: timing does not reveal which usernames exist.
 * Every derivation passes the login gate (login-gate.ts, rule LOGIN-gate).
 */
import { ErrInvalidCredentials } from '../domain/errors.ts';
import type { CredentialStore } from '../ports/credential-store.ts';
import { verifyPassword } from './password-hasher.ts';
import { LoginGate, UNIDENTIFIED_CLIENT } from './login-gate.ts';
import type { TokenService } from './token-service.ts';

/**
 * The scrypt of a password nobody has, at password-hasher.ts's default cost (its unit test holds the cost
 * equal): a constant rather than derived at start, which cost each process one full derivation (~37 ms of
 * CPU) and made its first unknown-user login wait on it.
 */
const DUMMY_HASH = 'scrypt$16384$8$1$HnOM9YiapX5GywCdHwHVRQ$ez_FHMwR5kuLEWgk69YLGRTm7QDEDMPVXOniJmMvBQA';

export class AuthService {
  readonly #credentials: CredentialStore;
  readonly #tokens: TokenService;
  readonly #gate: LoginGate;

  constructor(credentials: CredentialStore, tokens: TokenService, gate: LoginGate = new LoginGate()) {
    this.#credentials = credentials;
    this.#tokens = tokens;
    this.#gate = gate;
  }

  /**
   * `client`: an opaque key of the caller (the transport's peer address), for the gate's fairness;
   * `signal`: aborts when the caller is gone, which takes a waiting login out of the gate's queue.
   */
  async login(username: string, password: string, client: string = UNIDENTIFIED_CLIENT, signal?: AbortSignal): Promise<string> {
    const user = username === '' ? undefined : await this.#credentials.findByUsername(username);
    const stored = user?.passwordHash ?? DUMMY_HASH;
    const matches = await this.#gate.run(client, () => verifyPassword(password, stored), signal);
    if (user === undefined || !matches) throw new ErrInvalidCredentials();
    return this.#tokens.issue(user.id, user.username);
  }
}
