/**
 * Ids are kept joined in one flat string rather than an array of strings: ~300 bytes less per session
 * (a string header and an array slot per id), which keeps 50,000 sessions (spec 8 cap) under 50 MB of
 * heap (bench/proposed/session-recent-joined.patch). Order ids are UUIDs, so the separator never occurs.
 */
const SEPARATOR = '\u0000';

/**
 * One user's in-memory session (spec 2.2): the recently viewed order ids, most recent first, without
 * duplicates (a re-view moves the id to the front: our choice for spec 4.1 rule 7), and a count of views.
 */
export class Session {
  readonly #capacity: number;
  /** The recent ids, most recent first, joined by SEPARATOR; undefined when there are none. */
  #recent: string | undefined;
  #views = 0;

  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new RangeError('session: capacity must be a positive integer');
    this.#capacity = capacity;
  }

  recordView(orderId: string): void {
    if (orderId.includes(SEPARATOR)) throw new RangeError('session: an order id cannot contain NUL');
    this.#views += 1;
    // A fresh string each time (strings are immutable): a snapshot taken by flush (spec 3.2 rule 4) never changes.
    this.#recent = [orderId, ...this.#list().filter((id) => id !== orderId)].slice(0, this.#capacity).join(SEPARATOR);
  }

  recent(): string[] {
    return this.#list();
  }

  get views(): number {
    return this.#views;
  }

  /** A consistent copy of the state, safe to read while handlers keep writing (spec 3.2 rule 4). */
  snapshot(): { views: number; recent: readonly string[] } {
    return { views: this.#views, recent: this.#list() };
  }

  #list(): string[] {
    return this.#recent === undefined ? [] : this.#recent.split(SEPARATOR);
  }
}
