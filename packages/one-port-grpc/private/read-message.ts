/**
 * The one length-prefixed message of a unary call, read from the HTTP/2 request body with the size cap
 * of rule GRPC-message-size applied before and after gzip.
 */
import type { Readable } from 'node:stream';
import { gunzip } from 'node:zlib';
import { MAX_MESSAGE_BYTES, PREFIX_BYTES, Status } from './wire.ts';

/** A unary request's one message, or the status that refuses it. */
export type ReadOutcome =
  { readonly ok: true; readonly message: Uint8Array } | { readonly ok: false; readonly code: number; readonly message: string };

export const MESSAGE_TOO_LARGE = `request message larger than ${MAX_MESSAGE_BYTES} bytes`;
export const MALFORMED_MESSAGE = 'malformed request message';
const COMPRESSED_WITHOUT_ENCODING = 'compressed message without grpc-encoding';
const ENDED = 'the request ended before its message';

/**
 * Reads the one length-prefixed message of a unary call (rule GRPC-message-size). Never holds more
 * than the prefix plus MAX_MESSAGE_BYTES: a declared length above the limit is refused as soon as the
 * prefix arrives, and gzip is inflated with an output cap, so a small bomb stops at the limit.
 */
export function readUnaryMessage(body: Readable, gzip: boolean): Promise<ReadOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let expected = -1;
    let flag = 0;
    // Runs twice at most (an inflate completing after the stream closed): the second time only resolves
    // the settled promise again, a no-op, its listeners already off.
    const finish = (outcome: ReadOutcome): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('close', onClose);
      // The rest stays unread (rule GRPC-message-size): flow control holds its client back until the stream is reset or drained.
      body.pause();
      resolve(outcome);
    };
    // A refused stream's unread rest is drained by the session guard (http2-limits.ts, endUnreadRequest).
    const refuse = (code: number, message: string): void => finish({ ok: false, code, message });
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      received += chunk.length;
      if (expected < 0) {
        // The prefix is not complete yet.
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
