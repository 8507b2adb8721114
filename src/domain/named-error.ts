/**
 * A named error kind as a one-line class: `export class ErrX extends namedError('ErrX', 'message') {}`.
 * The class, its `name` and its `kind` always agree, so error tables can key on `kind` and logs show it.
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
