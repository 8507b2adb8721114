import type { SessionKey } from '../domain/session-key.ts';
import type { Logger } from '../ports/logger.ts';
import { systemTimers, type Timers } from '../ports/timers.ts';
import type { Component } from '../lifecycle/component.ts';
import { Session } from './session.ts';
import { ErrNoDoneSignal, ErrNoScopeKey, ErrScopeFull } from './session-errors.ts';

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

/** A session and the scope's bookkeeping of it: its state, its holders and its linger timer. */
interface Instance {
  readonly key: SessionKey;
  readonly session: Session;
  state: State;
  holders: number;
  lingerTimer: unknown;
}

/**
 * Per-key session instances with the acquire/release/linger state machine of spec 3.2. It is a
 * Component only for its stop (flush every instance at shutdown); it has no health or readiness
 * (rule 5).
 */
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

  /**
   * Acquire, `work`, release, all in one synchronous call: what every holder in the order service
   * does. The same checks and transitions as acquire and release, without the abort listener a lease
   * registers: a release that cannot be forgotten needs no fallback.
   */
  use<T>(context: SessionContext, work: (session: Session) => T): T {
    const instance = this.#enter(context);
    try {
      return work(instance.session);
    } finally {
      this.#release(instance);
    }
  }

  /** Acquire's checks and transitions; the caller owns one holder count of the returned instance. */
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
      // Taken again: a lingering instance's timer stops and it is live again (SESSION-linger-reacquire); a
      // live one has no timer and keeps its state, so no test of the state is needed.
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
    // Rule 2: a forgotten release happens when the call's context ends. Rule 3: abort only releases
    // this holder; the instance lingers like after any release. No `{ once: true }`: release removes the
    // listener itself.
    if (signal.aborted) queueMicrotask(release);
    else signal.addEventListener('abort', release);
    const lease = release as (() => void) & { [Symbol.dispose]: () => void; session: Session };
    lease[Symbol.dispose] = release;
    lease.session = instance.session;
    return lease;
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
