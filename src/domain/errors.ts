/**
 * The named errors of the core (spec 7): the core raises them, only the transports' one error table turns
 * them into a status or code (rule ERR-*). `kind` is the spec's name, so tables and logs can key on it.
 */
import { namedError } from './named-error.ts';

export type DomainErrorKind = 'ErrNotFound' | 'ErrForbidden' | 'ErrInvalidCredentials' | 'ErrValidation' | 'ErrIdempotencyKeyReused';

/** The common base, so a transport table can tell a domain error from any other. */
export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
}

function domainError<const K extends DomainErrorKind>(kind: K, defaultMessage: string = kind) {
  return class extends DomainError {
    readonly kind: K = kind;
    constructor(message: string = defaultMessage, options?: ErrorOptions) {
      super(message, options);
      this.name = kind;
    }
  };
}

export class ErrNotFound extends domainError('ErrNotFound', 'not found') {}
export class ErrForbidden extends domainError('ErrForbidden', 'forbidden') {}
export class ErrInvalidCredentials extends domainError('ErrInvalidCredentials', 'invalid credentials') {}
/** Its message is the domain's own wording and is shown to the caller (spec 7 rule 4). */
export class ErrValidation extends domainError('ErrValidation') {}
/**
 * An Idempotency-Key already answered a create with another body (draft-ietf-httpapi-idempotency-key-header
 * section 2.7: 422). Not in spec 7's table: our addition (rule IDEM-mismatch).
 */
export class ErrIdempotencyKeyReused extends domainError(
  'ErrIdempotencyKeyReused',
  'Idempotency-Key already used for a different request',
) {}

/**
 * A backend (database, cache, broker) could not do its part: adapters translate driver errors into it, so
 * the core never sees a driver type (rule ERR-internal). Its message never holds a secret.
 */
export class ErrUnavailable extends namedError('ErrUnavailable') {}

/** An order id that is not a UUID (spec 7 rule 1, "path id is not a UUID"): raised by parseOrderId. */
export class ErrInvalidOrderId extends namedError('ErrInvalidOrderId', 'invalid order id') {}

/** A write collided with an existing row (unique violation). */
export class ErrConflict extends namedError('ErrConflict') {}
