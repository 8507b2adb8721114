/**
 * A named error kind as a one-line class, `export class ErrX extends namedError('ErrX', 'message') {}`, for
 * every layer's errors: class, `name` and `kind` always agree, so the error table keys on `kind` and logs show it.
 */
export function namedError<const K extends string>(kind: K, defaultMessage: string = kind) {
  return class extends Error {
    readonly kind: K = kind;
    constructor(message: string = defaultMessage, options?: ErrorOptions) {
      super(message, options);
      this.name = kind;
    }
  };
}
