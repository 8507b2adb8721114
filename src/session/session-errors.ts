/** Session acquisition errors (spec 7 rule 3). Transports map all three to 503 `session unavailable`. */
export class ErrNoScopeKey extends Error {
  readonly kind = 'ErrNoScopeKey';
  constructor() {
    super('session: no scope key in context');
    this.name = 'ErrNoScopeKey';
  }
}

export class ErrScopeFull extends Error {
  readonly kind = 'ErrScopeFull';
  constructor(cap: number) {
    super(`session: scope full (${cap} live instances)`);
    this.name = 'ErrScopeFull';
  }
}

/** Spec 3.2 rule 2: the fallback release needs a done signal, so a call without one is refused. */
export class ErrNoDoneSignal extends Error {
  readonly kind = 'ErrNoDoneSignal';
  constructor() {
    super('session: context has no done signal');
    this.name = 'ErrNoDoneSignal';
  }
}

export type SessionError = ErrNoScopeKey | ErrScopeFull | ErrNoDoneSignal;

export function isSessionError(error: unknown): error is SessionError {
  return error instanceof ErrNoScopeKey || error instanceof ErrScopeFull || error instanceof ErrNoDoneSignal;
}
