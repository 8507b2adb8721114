/**
 * The gRPC-over-HTTP/2 wire details the unary server needs (the "gRPC over HTTP2" protocol document):
 * reading and framing length-prefixed messages, `grpc-timeout`, `grpc-message` percent-encoding, status codes.
 */
import type { Readable } from 'node:stream';
import { gunzip } from 'node:zlib';

/** The largest request message, before and after decompression (rule GRPC-message-size). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** The 5-byte prefix of every message: compressed flag, then the length as uint32 big-endian. */
export const PREFIX_BYTES = 5;

/** The largest delay a Node timer takes (2^31 - 1 ms); above it Node warns and fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000_001 };
const TIMEOUT = /^(\d{1,8})([HMSmun])$/;

/**
 * `grpc-timeout` in ms (rule GRPC-timeout-clamp): absent is undefined (no deadline), malformed NaN; clamped to
 * what a timer can hold, so a client's 99999999H is a long deadline, not a 1 ms one.
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

/** A unary request's one message, or the status that refuses it. */
export type ReadOutcome =
  { readonly ok: true; readonly message: Uint8Array } | { readonly ok: false; readonly code: number; readonly message: string };

export const MESSAGE_TOO_LARGE = `request message larger than ${MAX_MESSAGE_BYTES} bytes`;
export const MALFORMED_MESSAGE = 'malformed request message';
const COMPRESSED_WITHOUT_ENCODING = 'compressed message without grpc-encoding';
const ENDED = 'the request ended before its message';

/**
 * The one length-prefixed message of a call (rule GRPC-message-size): never holds more than the prefix plus
 * MAX_MESSAGE_BYTES, since a declared length above the limit is refused as soon as the prefix arrives and
 * gzip is inflated with an output cap, so a small bomb stops at the limit.
 */
export function readUnaryMessage(body: Readable, gzip: boolean): Promise<ReadOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let expected = -1;
    let flag = 0;
    // Runs twice at most (an inflate completing after the stream closed): the second time is a no-op.
    const finish = (outcome: ReadOutcome): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('close', onClose);
      // The rest stays unread: flow control holds its client back until the guard drains it (endUnreadRequest).
      body.pause();
      resolve(outcome);
    };
    const refuse = (code: number, message: string): void => finish({ ok: false, code, message });
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      received += chunk.length;
      if (expected < 0) {
        if (received < PREFIX_BYTES) return;
        const head = Buffer.concat(chunks, PREFIX_BYTES);
        flag = head[0]!;
        expected = head.readUInt32BE(1);
        if (flag > 1) return refuse(Status.INVALID_ARGUMENT, MALFORMED_MESSAGE);
        if (expected > MAX_MESSAGE_BYTES) return refuse(Status.RESOURCE_EXHAUSTED, MESSAGE_TOO_LARGE);
      }
      // A unary call carries exactly one message: anything after it is malformed.
      if (received > PREFIX_BYTES + expected) refuse(Status.INVALID_ARGUMENT, MALFORMED_MESSAGE);
    };
    const onEnd = (): void => {
      if (expected < 0 || received !== PREFIX_BYTES + expected) return refuse(Status.INVALID_ARGUMENT, MALFORMED_MESSAGE);
      const payload = Buffer.concat(chunks, received).subarray(PREFIX_BYTES);
      if (flag === 0) return finish({ ok: true, message: payload });
      if (!gzip) return refuse(Status.INTERNAL, COMPRESSED_WITHOUT_ENCODING);
      gunzip(payload, { maxOutputLength: MAX_MESSAGE_BYTES }, (error, inflated) => {
        if (error === null) finish({ ok: true, message: inflated });
        else if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') refuse(Status.RESOURCE_EXHAUSTED, MESSAGE_TOO_LARGE);
        else refuse(Status.INVALID_ARGUMENT, MALFORMED_MESSAGE);
      });
    };
    // Reset or cut before the end: nobody is left to answer.
    const onClose = (): void => refuse(Status.CANCELLED, ENDED);
    // A request ended by its HEADERS frame has already emitted 'end' (Node reads it at once).
    if (body.readableEnded) return onEnd();
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('close', onClose);
  });
}
