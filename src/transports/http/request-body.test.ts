import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ErrBodyTooLarge, ErrClientClosed, ErrUnsupportedMediaType } from '../errors/request-errors.ts';
import { checkJsonContentType, MAX_BODY_BYTES, readBody } from './request-body.ts';

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

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('readBody', () => {
  it('the limit is 1 MiB', () => {
    expect(MAX_BODY_BYTES).toBe(1_048_576);
  });

  it('reads a body in chunks as UTF-8, even a character split across chunks', async () => {
    const euro = Buffer.from('€'); // three bytes
    const { req } = fakeRequest([Buffer.from('{"item":"'), euro.subarray(0, 1), euro.subarray(1), Buffer.from('"}')]);
    expect(await readBody(req)).toBe('{"item":"€"}');
  });

  it('an empty body is the empty string', async () => {
    expect(await readBody(fakeRequest([]).req)).toBe('');
  });

  it('accepts exactly the limit and refuses one byte more', async () => {
    expect(await readBody(fakeRequest([Buffer.alloc(6, 'a'), Buffer.alloc(4, 'b')]).req, 10)).toBe('aaaaaabbbb');
    const error = await failure(readBody(fakeRequest([Buffer.alloc(6, 'a'), Buffer.alloc(5, 'b')]).req, 10));
    expect(error).toBeInstanceOf(ErrBodyTooLarge);
    expect((error as Error).message).toBe('request body too large');
  });

  it('stops reading as soon as the limit is passed', async () => {
    const { req, pulled } = fakeRequest([Buffer.alloc(8), Buffer.alloc(8), Buffer.alloc(8), Buffer.alloc(8)]);
    expect(await failure(readBody(req, 10))).toBeInstanceOf(ErrBodyTooLarge);
    expect(pulled()).toBe(2);
  });

  it('a declared Content-Length over the limit is refused before reading anything', async () => {
    const { req, pulled } = fakeRequest([Buffer.alloc(4)], { 'content-length': '11' });
    expect(await failure(readBody(req, 10))).toBeInstanceOf(ErrBodyTooLarge);
    expect(pulled()).toBe(0);
    const declaredHuge = fakeRequest([Buffer.alloc(4)], { 'content-length': String(2 * MAX_BODY_BYTES) });
    expect(await failure(readBody(declaredHuge.req))).toBeInstanceOf(ErrBodyTooLarge);
    expect(declaredHuge.pulled()).toBe(0);
  });

  it('a lying small Content-Length does not lift the limit', async () => {
    const { req } = fakeRequest([Buffer.alloc(8), Buffer.alloc(8)], { 'content-length': '1' });
    expect(await failure(readBody(req, 10))).toBeInstanceOf(ErrBodyTooLarge);
  });

  it('a body stream that fails mid-way (the client hung up) is ErrClientClosed, not a server fault', async () => {
    const cause = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    const stream = Readable.from(
      (async function* () {
        yield Buffer.from('{"item":');
        throw cause;
      })(),
    );
    const error = await failure(readBody(Object.assign(stream, { headers: {} }) as unknown as IncomingMessage));
    expect(error).toBeInstanceOf(ErrClientClosed);
    expect((error as Error).cause).toBe(cause);
  });

  it('over a real socket: a chunked 2 MiB body without Content-Length is refused', async () => {
    const outcomes: unknown[] = [];
    const server = createServer((req, res) => {
      readBody(req).then(
        (body) => outcomes.push(body.length),
        (error: unknown) => outcomes.push(error),
      ).finally(() => res.writeHead(204, { connection: 'close' }).end());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const client = request({ host: '127.0.0.1', port, method: 'POST', path: '/' });
      client.on('error', () => undefined); // the server may stop reading mid-upload
      const answered = new Promise<void>((resolve) => {
        client.on('response', (res) => {
          res.resume();
          resolve();
        });
        client.on('close', () => resolve());
      });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      for (let i = 0; i < 32; i++) client.write(chunk);
      client.end();
      await answered;
      for (let i = 0; i < 100 && outcomes.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(outcomes).toHaveLength(1);
      expect(outcomes[0]).toBeInstanceOf(ErrBodyTooLarge);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('checkJsonContentType (rule HTTP-json-content-type)', () => {
  it.each([undefined, 'application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/problem+json', 'application/vnd.orders+json; charset=utf8'])(
    'accepts %s',
    (type) => expect(() => checkJsonContentType(type)).not.toThrow(),
  );

  it.each(['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'text/json', 'application/jsonx', 'application/json; charset=iso-8859-1', ''])(
    'refuses %s with ErrUnsupportedMediaType',
    (type) => expect(() => checkJsonContentType(type)).toThrow(ErrUnsupportedMediaType),
  );

  it('readBody refuses before pulling a chunk', async () => {
    const { req, pulled } = fakeRequest([Buffer.from('{}')], { 'content-type': 'text/plain' });
    expect(await failure(readBody(req))).toBeInstanceOf(ErrUnsupportedMediaType);
    expect(pulled()).toBe(0);
  });
});
