/**
 * How a session holds its recent ids: one flat string, the entries concatenated, rather than an array
 * of strings (an array costs a string header and a slot per id). Each entry delimits itself.
 */
export interface RecentIdsCodec {
  encode(id: string): string;
  decode(entry: string): string;
  /** Where the entry that starts at `at` ends. */
  entryEnd(all: string, at: number): number;
}

const SEPARATOR = '\u0000';

/** Ids as they are, each followed by NUL (so an id may not contain NUL). */
export const plainIds: RecentIdsCodec = {
  encode: (id) => id + SEPARATOR,
  decode: (entry) => entry.slice(0, -1),
  entryEnd: (all, at) => all.indexOf(SEPARATOR, at) + 1,
};

/**
 * One user's in-memory session (spec 2.2): the recently viewed order ids, most recent first, without
 * duplicates (a re-view moves the id to the front: our choice for spec 4.1 rule 7), and a count of views.
 */
export class Session {
  readonly #capacity: number;
  readonly #codec: RecentIdsCodec;
  /** The encoded entries, most recent first, concatenated; undefined when there are none. */
  #recent: string | undefined;
  #views = 0;

  constructor(capacity: number, codec: RecentIdsCodec = plainIds) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new RangeError('session: capacity must be a positive integer');
    this.#capacity = capacity;
    this.#codec = codec;
  }

  recordView(orderId: string): void {
    if (orderId.includes(SEPARATOR)) throw new RangeError('session: an order id cannot contain NUL');
    this.#views += 1;
    const entry = this.#codec.encode(orderId);
    // Viewed again while it is the most recent (a client polling one order): the list is unchanged.
    // Entries are self-delimiting (fixed length or SEPARATOR-terminated), so a prefix match is the entry.
    if (this.#recent?.startsWith(entry) === true) return;
    // A fresh flat string each time (strings are immutable, join flattens): a snapshot taken by flush
    // (spec 3.2 rule 4) never changes.
    this.#recent = [entry, ...this.#entries().filter((e) => e !== entry)].slice(0, this.#capacity).join('');
  }

  recent(): string[] {
    return this.#entries().map((entry) => this.#codec.decode(entry));
  }

  /** A consistent copy of the state, safe to read while handlers keep writing (spec 3.2 rule 4). */
  snapshot(): { views: number; recent: readonly string[] } {
    return { views: this.#views, recent: this.recent() };
  }

  #entries(): string[] {
    const all = this.#recent;
    const entries: string[] = [];
    if (all === undefined) return entries;
    for (let at = 0; at < all.length;) {
      const end = this.#codec.entryEnd(all, at);
      entries.push(all.slice(at, end));
      at = end;
    }
    return entries;
  }
}
