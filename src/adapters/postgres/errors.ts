/**
 * The one place driver errors become domain errors, at the adapter boundary (the core never sees a
 * pg type):
 *   23505 unique violation            → ErrConflict
 *   other class 23 (check 23514, not-null 23502, ...) and class 22 (bad data)
 *                                     → ErrUnavailable "integrity": the domain (spec 7 rule 2) should have
 *                                       refused the value, so this is an internal fault (500), never a
 *                                       caller's 400
 *   everything else (refused connection, timeouts, 57P01 admin shutdown, 08xxx, 53xxx, pool ended)
 *                                     → ErrUnavailable
 * No `cause` is attached: a driver error may carry the connection string (Node's URL errors keep their
 * input), and a logger serialising the cause would leak it. Messages are scrubbed of known secrets.
 */
import { ErrConflict, ErrUnavailable } from '../../domain/errors.ts';

export function translatePgError(error: unknown, operation: string, secrets: readonly string[] = []): ErrConflict | ErrUnavailable {
  if (error instanceof ErrConflict || error instanceof ErrUnavailable) return error;
  const { code, message, constraint } = describe(error);
  const safe = scrub(message, secrets);
  const named = constraint === undefined ? '' : ` (constraint ${constraint})`;
  if (code === '23505') return new ErrConflict(`database: ${operation}: duplicate key${named}`);
  if (code !== undefined && (code.startsWith('23') || code.startsWith('22'))) {
    return new ErrUnavailable(`database: ${operation}: integrity: row rejected by the database${named}: ${safe} (SQLSTATE ${code})`);
  }
  // An absent code reads "undefined", which is no SQLSTATE.
  const suffix = /^[0-9A-Z]{5}$/.test(String(code)) ? ` (SQLSTATE ${code})` : '';
  return new ErrUnavailable(`database: ${operation}: ${safe}${suffix}`);
}

/**
 * Replaces every secret and any `scheme://user:password@` credential with `***`. The pattern looks only
 * at what follows `://`: the scheme in front is kept whatever it is.
 */
export function scrub(message: string, secrets: readonly string[] = []): string {
  let out = message;
  for (const secret of secrets) if (secret !== '') out = out.split(secret).join('***');
  return out.replace(/(:\/\/[^:/@\s]*:)[^@\s]*@/g, '$1***@');
}

function describe(error: unknown): { code: string | undefined; message: string; constraint: string | undefined } {
  if (typeof error !== 'object' || error === null) return { code: undefined, message: String(error), constraint: undefined };
  const record = error as { code?: unknown; message?: unknown; constraint?: unknown };
  const code = typeof record.code === 'string' ? record.code : undefined;
  const message = typeof record.message === 'string' && record.message !== '' ? record.message : (code ?? 'unknown error');
  const constraint = typeof record.constraint === 'string' && /^[A-Za-z0-9_]+$/.test(record.constraint) ? record.constraint : undefined;
  return { code, message, constraint };
}
