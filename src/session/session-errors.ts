import { namedError } from '../domain/named-error.ts';

/** Session acquisition errors (spec 7 rule 3). Transports map all three to 503 `session unavailable`. */
export class ErrNoScopeKey extends namedError('ErrNoScopeKey', 'session: no scope key in context') {}

export class ErrScopeFull extends namedError('ErrScopeFull') {
  constructor(cap: number) {
    super(`session: scope full (${cap} live instances)`);
  }
}

/** Spec 3.2 rule 2: the fallback release needs a done signal, so a call without one is refused. */
export class ErrNoDoneSignal extends namedError('ErrNoDoneSignal', 'session: context has no done signal') {}

export type SessionError = ErrNoScopeKey | ErrScopeFull | ErrNoDoneSignal;

export function isSessionError(error: unknown): error is SessionError {
  return error instanceof ErrNoScopeKey || error instanceof ErrScopeFull || error instanceof ErrNoDoneSignal;
}
