import type { RecentIdsCodec } from './session.ts';

/**
 * A speed (memory) seam, chosen in composition (composition/create-app.ts passes `packedUuids` to the
 * SessionScope), removable by deleting this file and that line: sessions then hold ids as they are.
 *
 * Order ids are canonical lower-case UUIDs (the stores return them so); held packed to their 16 bytes,
 * one latin1 character each, 10 ids take ~170 bytes instead of ~370. Together with the flat string of
 * session.ts this keeps 50,000 sessions (spec 8 cap) under 50 MB of heap, held or lingering
 * (bench/session-heap.ts: 48.1 MB). Any other id is held verbatim, so the list returns exactly what
 * was recorded.
 *
 * Entry forms: PACKED then 16 characters (the UUID's bytes, any value 0x00-0xff); VERBATIM then the id
 * then the separator NUL (so an id may not contain NUL).
 */
const PACKED = '\u0001';
const VERBATIM = '\u0002';
const SEPARATOR = '\u0000';
const PACKED_LENGTH = 17;
/** Where each byte's two hex digits start in a canonical UUID (`8-4-4-4-12`). */
const BYTE_OFFSETS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
const HYPHEN_OFFSETS = [8, 13, 18, 23];
const byteCodes: number[] = new Array<number>(16).fill(0);

/** The value of a lower-case hex digit's char code, else a negative number (upper case is not canonical). */
function hexValue(code: number): number {
  // Below '0' (48) the difference is negative already.
  if (code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

export const packedUuids: RecentIdsCodec = {
  /**
   * Packs a canonical lower-case UUID by hand, checking it on the way: a regular expression, a hex
   * Buffer and its latin1 string cost ~0.6 µs per view, this ~0.12 µs (micro-benchmark).
   */
  encode(id: string): string {
    if (id.length !== 36 || HYPHEN_OFFSETS.some((at) => id.charCodeAt(at) !== 45)) return VERBATIM + id + SEPARATOR;
    for (let i = 0; i < 16; i++) {
      const at = BYTE_OFFSETS[i] as number;
      const high = hexValue(id.charCodeAt(at));
      const low = hexValue(id.charCodeAt(at + 1));
      if (high < 0 || low < 0) return VERBATIM + id + SEPARATOR;
      byteCodes[i] = high * 16 + low;
    }
    return PACKED + String.fromCharCode(...byteCodes);
  },
  decode(entry: string): string {
    if (entry[0] === VERBATIM) return entry.slice(1, -1);
    const hex = Buffer.from(entry.slice(1), 'latin1').toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  },
  entryEnd(all: string, at: number): number {
    return all[at] === PACKED ? at + PACKED_LENGTH : all.indexOf(SEPARATOR, at) + 1;
  },
};
