/** A user as the credential store holds it. The hash format belongs to the password hasher. */
export interface User {
  readonly id: string;
  readonly username: string;
  readonly passwordHash: string;
}
