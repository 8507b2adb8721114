import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ErrBodyTooLarge, ErrClientClosed, ErrUnsupportedMediaType } from '../../errors/table.ts';
import { checkJsonContentType, readBody } from './request-body.ts';

/** A request-shaped stream that records how many chunks were pulled from it. */
function fakeRequest(chunks: Buffer[], headers: Record<string, string> = {}): { req: IncomingMessage; pulled: () => number } {
  let pulled = 0;
  const stream = Readable.from(
    (function* () {
      for (const chunk of chunks) {
        pulled += 1;
        yield chunk;
      }
    })(),
  );
  return { req: Object.assign(stream, { headers }) as unknown as IncomingMessage, pulled: () => pulled };
}

describe('readBody', () => {
  it('reads a body in chunks as UTF-8, even a character split across chunks; no chunk is the empty string', async () => {
    const euro = Buffer.from('€'); // three bytes
    const { req } = fakeRequest([Buffer.from('{"item":"'), euro.subarray(0, 1), euro.subarray(1), Buffer.from('"}')]);
    expect(await readBody(req)).toBe('{"item":"€"}');
    expect(await readBody(fakeRequest([]).req)).toBe('');
  });

  // The default limit, exactly it accepted and one byte more refused, are the create-body-exactly-1mib and
  // create-body-over-1mib conformance cases (LIMIT-body-size); this is how little is read to refuse.
  it.each([
    ['no Content-Length', {}, 2],
    ['a lying small Content-Length', { 'content-length': '1' }, 2],
    ['a declared Content-Length over the limit', { 'content-length': '11' }, 0],
  ])('with %s, stops reading as soon as the limit is passed', async (_label, headers, chunks) => {
    const { req, pulled } = fakeRequest([Buffer.alloc(8), Buffer.alloc(8), Buffer.alloc(8), Buffer.alloc(8)], headers);
    const error = await readBody(req, 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrBodyTooLarge);
    expect((error as Error).message).toBe('request body too large');
    expect(pulled()).toBe(chunks);
  });

  it('a body stream that fails mid-way (the client hung up) is ErrClientClosed, not a server fault', async () => {
    const cause = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    const stream = Readable.from(
      (async function* () {
        yield Buffer.from('{"item":');
        throw cause;
      })(),
    );
    const error = await readBody(Object.assign(stream, { headers: {} }) as unknown as IncomingMessage).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrClientClosed);
    expect((error as Error).cause).toBe(cause);
  });
});

describe('checkJsonContentType (rule HTTP-json-content-type)', () => {
  it.each([
    undefined,
    'application/json',
    'Application/JSON',
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
    'application/problem+json',
    'application/vnd.orders+json; charset=utf8',
  ])('accepts %s', (type) => expect(() => checkJsonContentType(type)).not.toThrow());

  it.each([
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'text/json',
    'application/jsonx',
    'application/json; charset=iso-8859-1',
    '',
  ])('refuses %s with ErrUnsupportedMediaType', (type) => expect(() => checkJsonContentType(type)).toThrow(ErrUnsupportedMediaType));

  it('readBody refuses before pulling a chunk', async () => {
    const { req, pulled } = fakeRequest([Buffer.from('{}')], { 'content-type': 'text/plain' });
    await expect(readBody(req)).rejects.toBeInstanceOf(ErrUnsupportedMediaType);
    expect(pulled()).toBe(0);
  });
});
