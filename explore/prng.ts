/**
 * The explorer's one source of randomness: a seeded sfc32 generator (Chris Doty-Humphrey's Small Fast
 * Counter, as in PractRand), hand-written on purpose. Every choice of a run (the schedule, ids, which
 * replica, which fault) is a call here, so a seed is the whole run. fast-check's seeded generators
 * (pure-rand, reached only through fast-check's own arbitraries) would serve, but the explorer needs
 * one plain number per call at a rate of millions a minute and two independent streams per seed (the
 * schedule, and the ids the run draws while it executes, so a shrunk schedule still runs on the same
 * ids); ten lines of integer arithmetic do that without going through an arbitrary per draw.
 */
export class Prng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number, stream = 0) {
    this.#a = 0x9e3779b9 ^ stream;
    this.#b = 0x243f6a88;
    this.#c = 0xb7e15162;
    this.#d = seed >>> 0;
    // Warm-up, as the reference implementation does: the first outputs of a fresh state are correlated.
    for (let i = 0; i < 15; i++) this.next();
  }

  /** A uniform 32-bit unsigned integer. */
  next(): number {
    this.#a >>>= 0;
    this.#b >>>= 0;
    this.#c >>>= 0;
    this.#d >>>= 0;
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor((this.next() / 0x1_0000_0000) * n);
  }

  /** An integer in [lo, hi]. */
  between(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() / 0x1_0000_0000 < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('prng: pick from nothing');
    return items[this.int(items.length)] as T;
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(entries: readonly (readonly [number, T])[]): T {
    const total = entries.reduce((sum, [w]) => sum + w, 0);
    let at = this.int(total);
    for (const [w, value] of entries) {
      if (at < w) return value;
      at -= w;
    }
    return (entries[entries.length - 1] as readonly [number, T])[1];
  }

  /** A version-4 UUID in canonical lower case, as randomUUID gives (order and event ids). */
  uuid(): string {
    const hex = Array.from({ length: 4 }, () => this.next().toString(16).padStart(8, '0')).join('');
    const variant = ((parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}
