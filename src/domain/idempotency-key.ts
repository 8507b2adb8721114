/**
 * The Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header): our choices for its format and
 * lifetime (rules IDEM-format, IDEM-expiry).
 */
import { ErrValidation } from './errors.ts';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** How long a key answers retries: a day, long enough for any client's retry policy. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60_000;

const INVALID = 'invalid Idempotency-Key header (expected a quoted string of 1 to 255 printable ASCII characters)';
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
const BARE_TOKEN = /^[\x21-\x7e]+$/;

/**
 * The header's value. The draft makes it a Structured Field String (`"abc"`, RFC 8941 3.3.3); we also
 * accept the bare form (`abc`) that many clients send. The key is the unescaped content, compared
 * byte for byte.
 */
export function parseIdempotencyKey(raw: string): string {
  const value = raw.trim();
  const quoted = SF_STRING.exec(value);
  let key: string;
  if (quoted !== null) key = (quoted[1] ?? '').replace(/\\(["\\])/g, '$1');
  else if (BARE_TOKEN.test(value) && !value.startsWith('"')) key = value;
  else throw new ErrValidation(INVALID);
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) throw new ErrValidation(INVALID);
  return key;
}
