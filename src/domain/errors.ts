/**
 * Named domain errors (spec 7). The core raises these; only a transport's mapping table turns them
 * into a status or code. `kind` is the spec's name so tables and logs can key on it.
 */
export abstract class DomainError extends Error {
  abstract readonly kind: 'ErrNotFound' | 'ErrForbidden' | 'ErrInvalidCredentials' | 'ErrValidation';
}

export class ErrNotFound extends DomainError {
  readonly kind = 'ErrNotFound';
  constructor(message = 'not found') {
    super(message);
    this.name = 'ErrNotFound';
  }
}

export class ErrForbidden extends DomainError {
  readonly kind = 'ErrForbidden';
  constructor(message = 'forbidden') {
    super(message);
    this.name = 'ErrForbidden';
  }
}

export class ErrInvalidCredentials extends DomainError {
  readonly kind = 'ErrInvalidCredentials';
  constructor(message = 'invalid credentials') {
    super(message);
    this.name = 'ErrInvalidCredentials';
  }
}

/** Its message is the domain's own wording and is shown to the caller (spec 7 rule 4). */
export class ErrValidation extends DomainError {
  readonly kind = 'ErrValidation';
  constructor(message: string) {
    super(message);
    this.name = 'ErrValidation';
  }
}

/**
 * A backend (database, cache, broker) could not do its part. Adapters translate driver errors into
 * this at their boundary so the core never sees a driver type; transports map it to 500.
 * The message must never contain a secret (DSNs are redacted by the adapter).
 */
export class ErrUnavailable extends Error {
  readonly kind = 'ErrUnavailable';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ErrUnavailable';
  }
}

/** A write collided with an existing row (unique violation). */
export class ErrConflict extends Error {
  readonly kind = 'ErrConflict';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ErrConflict';
  }
}
