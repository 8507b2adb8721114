/**
 * The recent ids are kept in one flat one-byte string rather than an array of strings: an array costs
 * a string header and a slot per id. Order ids are canonical lower-case UUIDs (the stores return them
 * so), and those are packed to their 16 bytes, one latin1 character each: 10 ids take ~170 bytes instead
 * of ~370. Together this keeps 50,000 sessions (spec 8 cap) under 50 MB of heap, held or lingering
 * (bench/session-heap.ts). Any other id is kept verbatim, so the list returns exactly what was recorded.
 *
 * Entry forms inside the string:
 * - PACKED then 16 characters (the UUID's bytes, any value 0x00-0xff);
 * - VERBATIM then the id then SEPARATOR (so an id may not contain NUL).
 */
const PACKED = '\u0001';
const VERBATIM = '\u0002';
const SEPARATOR = '\u0000';
const PACKED_LENGTH = 17;
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function encode(id: string): string {
  if (!CANONICAL_UUID.test(id)) return VERBATIM + id + SEPARATOR;
  return PACKED + Buffer.from(id.replaceAll('-', ''), 'hex').toString('latin1');
}

function decode(entry: string): string {
  if (entry[0] === VERBATIM) return entry.slice(1, -1);
  const hex = Buffer.from(entry.slice(1), 'latin1').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * One user's in-memory session (spec 2.2): the recently viewed order ids, most recent first, without
 * duplicates (a re-view moves the id to the front: our choice for spec 4.1 rule 7), and a count of views.
 */
export class Session {
  readonly #capacity: number;
  /** The encoded entries, most recent first, concatenated; undefined when there are none. */
  #recent: string | undefined;
  #views = 0;

  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new RangeError('session: capacity must be a positive integer');
    this.#capacity = capacity;
  }

  recordView(orderId: string): void {
    if (orderId.includes(SEPARATOR)) throw new RangeError('session: an order id cannot contain NUL');
    this.#views += 1;
    const entry = encode(orderId);
    // Viewed again while it is the most recent (a client polling one order): the list is unchanged.
    // Entries are self-delimiting (fixed length or SEPARATOR-terminated), so a prefix match is the entry.
    if (this.#recent?.startsWith(entry) === true) return;
    // A fresh flat string each time (strings are immutable, join flattens): a snapshot taken by flush
    // (spec 3.2 rule 4) never changes.
    this.#recent = [entry, ...this.#entries().filter((e) => e !== entry)].slice(0, this.#capacity).join('');
  }

  recent(): string[] {
    return this.#entries().map(decode);
  }

  get views(): number {
    return this.#views;
  }

  /** A consistent copy of the state, safe to read while handlers keep writing (spec 3.2 rule 4). */
  snapshot(): { views: number; recent: readonly string[] } {
    return { views: this.#views, recent: this.recent() };
  }

  #entries(): string[] {
    const all = this.#recent;
    const entries: string[] = [];
    if (all === undefined) return entries;
    for (let at = 0; at < all.length; ) {
      const end = all[at] === PACKED ? at + PACKED_LENGTH : all.indexOf(SEPARATOR, at) + 1;
      entries.push(all.slice(at, end));
      at = end;
    }
    return entries;
  }
}
