/**
 * The gRPC-over-HTTP/2 wire details the unary server needs (the "gRPC over HTTP2" protocol document):
 * length-prefixed messages, `grpc-timeout`, the `grpc-message` percent-encoding, the status codes.
 */

/** The largest request message, before and after decompression (rule GRPC-message-size). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** The 5-byte prefix of every message: compressed flag, then the length as uint32 big-endian. */
export const PREFIX_BYTES = 5;

/** The largest delay a Node timer takes (2^31 - 1 ms); above it Node warns and fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000_001 };
const TIMEOUT = /^(\d{1,8})([HMSmun])$/;

/**
 * `grpc-timeout` in milliseconds (rule GRPC-timeout-clamp): at most 8 digits and a unit; absent gives
 * undefined (no deadline), malformed gives NaN. Values are clamped to what a timer can hold, so a
 * client's 99999999H is a long deadline, not a 1 ms one.
 */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = TIMEOUT.exec(value);
  if (match === null) return Number.NaN;
  const ms = Number(match[1]) * TIMEOUT_UNIT_MS[match[2]!]!;
  return Math.min(Math.max(Math.ceil(ms), 0), MAX_TIMER_MS);
}

/** One uncompressed length-prefixed message. */
export function frameMessage(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(PREFIX_BYTES + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, PREFIX_BYTES);
  return framed;
}

/** `grpc-message` is percent-encoded UTF-8: printable ASCII except `%` goes as is. */
export function encodeGrpcMessage(message: string): string {
  return /^[\x20-\x24\x26-\x7e]*$/.test(message) ? message : encodeURIComponent(message);
}

/** The gRPC status codes this layer itself answers with (the others come from the caller's toStatus). */
export const Status = {
  OK: 0,
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
} as const;
