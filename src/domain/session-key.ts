/**
 * The session key (spec 2.2, rule SESSION-key): the user identifier from a verified token, as a type of its
 * own so a bare string cannot be passed where a key is wanted. Only the authentication step mints one.
 */
declare const sessionKeyBrand: unique symbol;
export type SessionKey = string & { readonly [sessionKeyBrand]: true };

/** Call this only after a token has been verified (src/service/authenticate.ts). */
export function sessionKeyFromVerifiedSubject(subject: string): SessionKey {
  return subject as SessionKey;
}
