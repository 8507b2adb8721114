/**
 * Per-user in-memory sessions (spec 2.2, 3.2): each user's Session, and the scope that holds one instance per
 * session key with the acquire/release/linger state machine of spec 3.2. The scope is a Component only for
 * its stop (every instance flushed at shutdown); it has no health or readiness (spec 3.2 rule 5).
 */
import { namedError } from '../domain/named-error.ts';
import type { SessionKey } from '../domain/session-key.ts';
import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../ports/logger.ts';
import { systemTimers, type Timers } from '../ports/timers.ts';

/** Session acquisition errors (spec 7 rule 3). Transports map all three to 503 `session unavailable`. */
export class ErrNoScopeKey extends namedError('ErrNoScopeKey', 'session: no scope key in context') {}

export class ErrScopeFull extends namedError('ErrScopeFull') {
  constructor(cap: number) {
    super(`session: scope full (${cap} live instances)`);
  }
}

/** Spec 3.2 rule 2: the fallback release needs a done signal, so a call without one is refused. */
export class ErrNoDoneSignal extends namedError('ErrNoDoneSignal', 'session: context has no done signal') {}

export function isSessionError(error: unknown): error is ErrNoScopeKey | ErrScopeFull | ErrNoDoneSignal {
  return error instanceof ErrNoScopeKey || error instanceof ErrScopeFull || error instanceof ErrNoDoneSignal;
}

/**
 * One user's in-memory session (spec 2.2): the recently viewed order ids, most recent first, without
 * duplicates (a re-view moves the id to the front: our choice for spec 4.1 rule 7), and a count of views.
 */
export class Session {
  readonly #capacity: number;
  /** Replaced, never changed in place: a snapshot taken by flush (spec 3.2 rule 4) stays as it was. */
  #recent: readonly string[] = [];
  #views = 0;

  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new RangeError('session: capacity must be a positive integer');
    this.#capacity = capacity;
  }

  recordView(orderId: string): void {
    this.#views += 1;
    this.#recent = [orderId, ...this.#recent.filter((id) => id !== orderId)].slice(0, this.#capacity);
  }

  recent(): string[] {
    return [...this.#recent];
  }

  /** A consistent copy of the state, safe to read while handlers keep writing (spec 3.2 rule 4). */
  snapshot(): { views: number; recent: readonly string[] } {
    return { views: this.#views, recent: this.recent() };
  }
}

/** Spec 8: fixed constants, not configuration. Tests construct a scope with other values. */
export const SESSION_LINGER_MS = 5 * 60_000;
export const SESSION_CAP = 50_000;

/** What a caller hands to acquire: the key minted by authentication and the call's done signal. */
export interface SessionContext {
  readonly sessionKey?: SessionKey | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** A release function that is also disposable, so `using lease = scope.acquire(ctx)` works (rule 1). */
export type SessionLease = (() => void) & Disposable & { readonly session: Session };

export interface SessionScopeOptions {
  readonly recentCapacity: number;
  readonly logger: Logger;
  readonly lingerMs?: number;
  readonly cap?: number;
  readonly timers?: Timers;
}

type State = 'live' | 'lingering' | 'closed';

interface Instance {
  readonly key: SessionKey;
  readonly session: Session;
  state: State;
  holders: number;
  lingerTimer: unknown;
}

export class SessionScope implements Component {
  readonly name = 'sessions';
  readonly #instances = new Map<SessionKey, Instance>();
  readonly #capacity: number;
  readonly #logger: Logger;
  readonly #lingerMs: number;
  readonly #cap: number;
  readonly #timers: Timers;

  constructor(options: SessionScopeOptions) {
    this.#capacity = options.recentCapacity;
    this.#logger = options.logger;
    this.#lingerMs = options.lingerMs ?? SESSION_LINGER_MS;
    this.#cap = options.cap ?? SESSION_CAP;
    this.#timers = options.timers ?? systemTimers;
  }

  /** Live and lingering instances: both count towards the cap. */
  get size(): number {
    return this.#instances.size;
  }

  /** Live and lingering instances apart (the orders_sessions gauge); walks them, so for scrapes only. */
  counts(): { live: number; lingering: number } {
    let lingering = 0;
    for (const instance of this.#instances.values()) if (instance.state === 'lingering') lingering += 1;
    return { live: this.#instances.size - lingering, lingering };
  }

  stateOf(key: SessionKey): State | 'absent' {
    return this.#instances.get(key)?.state ?? 'absent';
  }

  acquire(context: SessionContext): SessionLease {
    return this.#lease(this.#enter(context), context.signal as AbortSignal);
  }

  /** Acquire, `work`, release in one synchronous call: a release that cannot be forgotten needs no abort fallback. */
  use<T>(context: SessionContext, work: (session: Session) => T): T {
    const instance = this.#enter(context);
    try {
      return work(instance.session);
    } finally {
      this.#release(instance);
    }
  }

  #enter(context: SessionContext): Instance {
    const key = context.sessionKey;
    if (key === undefined) throw new ErrNoScopeKey();
    if (context.signal === undefined) throw new ErrNoDoneSignal();

    let instance = this.#instances.get(key);
    if (instance === undefined) {
      if (this.#instances.size >= this.#cap) throw new ErrScopeFull(this.#cap);
      instance = { key, session: new Session(this.#capacity), state: 'live', holders: 0, lingerTimer: undefined };
      this.#instances.set(key, instance);
    } else {
      // Taken again: a lingering instance's timer stops and it is live again (SESSION-linger-reacquire).
      this.#timers.clearTimeout(instance.lingerTimer);
      instance.lingerTimer = undefined;
      instance.state = 'live';
    }
    instance.holders += 1;
    return instance;
  }

  #lease(instance: Instance, signal: AbortSignal): SessionLease {
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      signal.removeEventListener('abort', release);
      this.#release(instance);
    };
    // Rule 2: a forgotten release happens when the call's context ends. Rule 3: abort only releases this
    // holder; the instance lingers like after any release.
    if (signal.aborted) queueMicrotask(release);
    else signal.addEventListener('abort', release);
    return Object.assign(release, { [Symbol.dispose]: release, session: instance.session });
  }

  #release(instance: Instance): void {
    instance.holders -= 1;
    if (instance.holders > 0 || instance.state !== 'live') return;
    if (this.#lingerMs <= 0) {
      this.#close(instance); // rule 7: linger 0 dies with its last holder
      return;
    }
    instance.state = 'lingering';
    instance.lingerTimer = this.#timers.setTimeout(() => this.#close(instance), this.#lingerMs);
  }

  /** Runs on the scope's own timer, never on a request (rule 4). Flush, then Stop. */
  #close(instance: Instance): void {
    if (instance.state === 'closed') return;
    instance.state = 'closed';
    this.#instances.delete(instance.key);
    const { views, recent } = instance.session.snapshot();
    this.#logger.info({ user: instance.key, views, recent }, 'session: closed');
  }

  /** Shutdown: every remaining instance is flushed and stopped, holders or not. */
  async stop(): Promise<void> {
    for (const instance of [...this.#instances.values()]) {
      this.#timers.clearTimeout(instance.lingerTimer);
      this.#close(instance);
    }
  }
}
