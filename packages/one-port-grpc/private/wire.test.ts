// The wire details on their own: grpc-timeout, grpc-message, and reading a call's one message (rule GRPC-message-size).
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { settled } from '../../../test/support/eventually.ts';
import { encodeGrpcMessage, parseGrpcTimeout, readUnaryMessage, Status } from './wire.ts';

/**
 * The reader of a unary call's one message on a plain stream (the HTTP/2 request body in the server),
 * where the test decides each 'data' chunk: a prefix split across chunks, bytes after the message, a
 * body cut before its end. What a client sees of it over the wire is in unary-server.test.ts and
 * test/grpc/orders-grpc.test.ts.
 */
const MALFORMED = { ok: false, code: Status.INVALID_ARGUMENT, message: 'malformed request message' };

/** The length prefix (flag, then a declared length that may lie) and the bytes that follow it. */
function framed(declared: number, payload: Buffer, flag = 0): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = flag;
  prefix.writeUInt32BE(declared, 1);
  return Buffer.concat([prefix, payload]);
}

/** A body whose chunks are `bytes` cut every `size` bytes, one 'data' event each; ended unless told. */
function bodyOf(bytes: Buffer, size: number, end = true): PassThrough {
  const body = new PassThrough();
  for (let offset = 0; offset < bytes.length; offset += size) body.write(bytes.subarray(offset, offset + size));
  if (end) body.end();
  return body;
}

describe('readUnaryMessage: the one length-prefixed message of a unary call', () => {
  const message = Buffer.from('one message, in as many chunks as the client likes');

  it.each([1, 2, 3, 4, 6, 7, 16, message.length + 5])(
    'GRPC-message-size: a message in chunks of %i bytes, its prefix split too, is read whole',
    async (size) => {
      const read = await readUnaryMessage(bodyOf(framed(message.length, message), size), false);
      expect(read.ok && Buffer.from(read.message).toString()).toBe(message.toString());
    },
  );

  it.each([
    ['four bytes of a prefix', Buffer.from([0, 0, 0, 0])],
    ['a prefix declaring 3 bytes, none sent', framed(3, Buffer.alloc(0))],
    ['a prefix declaring 10 bytes, 5 sent in pieces', framed(10, Buffer.from('12345'))],
  ])('GRPC-malformed: %s, then the end of the request, is INVALID_ARGUMENT `malformed request message`', async (_name, bytes) => {
    expect(await readUnaryMessage(bodyOf(bytes, 2), false)).toEqual(MALFORMED);
  });

  it('GRPC-malformed: a byte after an empty message is refused as it arrives, without waiting for the end', async () => {
    const body = bodyOf(Buffer.concat([framed(0, Buffer.alloc(0)), Buffer.from([1])]), 5, false);
    const read = readUnaryMessage(body, false);
    // The body never ends: only the byte can settle the read.
    await settled(read, 'the read refused on the extra byte');
    expect(await read).toEqual(MALFORMED);
  });

  it('GRPC-message-size: a prefix declaring more than 1 MiB is RESOURCE_EXHAUSTED with the rule’s text, and the rest is left unread', async () => {
    const body = bodyOf(framed(1024 * 1024 + 1, Buffer.alloc(0)), 5, false);
    expect(await readUnaryMessage(body, false)).toEqual({
      ok: false,
      code: Status.RESOURCE_EXHAUSTED,
      message: 'request message larger than 1048576 bytes',
    });
    // What comes after stays in the body, not taken (in the server: flow control holds the client back).
    body.write(Buffer.alloc(1000));
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.readableLength).toBe(1000);
  });

  it('GRPC-malformed: after its answer the reader takes nothing more, so whoever drains the rest reads it to its end', async () => {
    // A compressed flag of 2: refused on the prefix.
    const body = bodyOf(framed(0, Buffer.alloc(0), 2), 5, false);
    expect(await readUnaryMessage(body, false)).toEqual(MALFORMED);
    body.resume();
    const ended = once(body, 'end');
    for (let i = 0; i < 3; i++) body.write(Buffer.alloc(100));
    body.end();
    await settled(ended, 'the rest read to its end');
  });

  it('GRPC-cancel: a body closed before its message (the client reset the stream) settles the read CANCELLED', async () => {
    const body = bodyOf(framed(10, Buffer.from('12345')), 5, false);
    const read = readUnaryMessage(body, false);
    body.destroy();
    await settled(read, 'the read settled by the close');
    expect(await read).toEqual({ ok: false, code: Status.CANCELLED, message: 'the request ended before its message' });
  });
});

describe('grpc-timeout (rule GRPC-timeout-clamp)', () => {
  it.each([
    ['1S', 1_000],
    ['250m', 250],
    ['2M', 120_000],
    ['1H', 3_600_000],
    ['1500u', 2],
    ['1n', 1],
    ['0m', 0],
    ['99999999H', 2 ** 31 - 1],
    ['99999999S', 2 ** 31 - 1],
  ])('%s → %i ms', (value, ms) => expect(parseGrpcTimeout(value)).toBe(ms));
  it.each(['', '1', 'S', '123456789S', '1s', '-1S', '1.5S', ' 1S', '1Sx', '5mjunk', '1S '])('%o is malformed', (value) =>
    expect(parseGrpcTimeout(value)).toBeNaN(),
  );
  it('absent: no deadline', () => expect(parseGrpcTimeout(undefined)).toBeUndefined());
});

describe('grpc-message encoding', () => {
  it('printable ASCII without % goes as is; anything else is percent-encoded UTF-8 that decodes back', () => {
    expect(encodeGrpcMessage('invalid order id')).toBe('invalid order id');
    for (const text of ['100% sure', 'café', 'line\nbreak']) {
      expect(encodeGrpcMessage(text)).toMatch(/^[\x20-\x7e]*$/);
      expect(decodeURIComponent(encodeGrpcMessage(text))).toBe(text);
    }
  });
});
