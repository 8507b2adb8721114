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
