/** A user as the credential store holds it (rule AUTH-10-credentials); the hash format is the password hasher's. */
export interface User {
  readonly id: string;
  readonly username: string;
  readonly passwordHash: string;
}
