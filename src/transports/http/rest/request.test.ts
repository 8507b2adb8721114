import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../../test/support/fake-timers.ts';
import { LogCapture } from '../../../../test/support/log-capture.ts';
import { listenLocal } from '../../../../test/support/ports.ts';
import { until } from '../../../../test/support/eventually.ts';
import { sessionKeyFromVerifiedSubject } from '../../../domain/session-key.ts';
import { createLogger } from '../../../observability/logger.ts';
import { SessionScope } from '../../../session/scope.ts';
import { ErrBadHostHeader, ErrBodyTooLarge, ErrClientClosed, ErrUnsupportedMediaType, REQUEST_ENDED } from '../../errors/table.ts';
import { authorizationHeader, checkHostHeader, checkJsonContentType, readBody, requestDoneSignal } from './request.ts';

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

/** A request as node:http (or node:http2's compatibility layer) hands it over: version and raw name/value pairs. */
function parsedRequest(version: string, rawHeaders: string[]): IncomingMessage {
  const [major, minor] = version.split('.').map(Number);
  return { httpVersionMajor: major, httpVersionMinor: minor, rawHeaders } as unknown as IncomingMessage;
}

// HTTP/1.x on the wire (two Host headers, none on 1.1, none on 1.0, one) is the host-header-missing-or-repeated-is-400
// conformance case; HTTP/2 cannot be sent with a repeated host field by the drivers' client, so it is checked here.
describe('checkHostHeader (rule HTTP-host-header)', () => {
  it.each([
    ['1.1', ['Host', 'a.example', 'host', 'b.example']],
    ['1.1', ['Accept', '*/*']],
    ['1.0', ['HOST', 'a.example', 'Host', 'a.example']],
  ])('[HTTP-host-header] HTTP/%s %j is refused', (version, raw) => {
    expect(() => checkHostHeader(parsedRequest(version, raw))).toThrow(ErrBadHostHeader);
  });

  it.each([
    ['1.1', ['Host', 'a.example', 'Accept', '*/*']],
    ['1.0', []],
    // HTTP/2 carries :authority and is left to its own framing, whatever host fields it has.
    ['2.0', []],
    ['2.0', ['host', 'a.example', 'host', 'b.example']],
  ])('[HTTP-host-header] HTTP/%s %j is accepted', (version, raw) => {
    expect(() => checkHostHeader(parsedRequest(version, raw))).not.toThrow();
  });
});

describe('authorizationHeader (rule AUTH-single-header)', () => {
  it('[AUTH-single-header] one header is passed on; none, or two, is no credential', () => {
    expect(authorizationHeader(parsedRequest('1.1', ['Host', 'h', 'Authorization', 'Bearer a']))).toBe('Bearer a');
    expect(authorizationHeader(parsedRequest('1.1', ['Host', 'h']))).toBeUndefined();
    expect(authorizationHeader(parsedRequest('1.1', ['authorization', 'Bearer a', 'Authorization', 'Bearer a']))).toBeUndefined();
  });
});

/** One request to a node:http server whose handler is `handle`; resolves with the request's done signal once its response closed. */
async function serveOne(handle: (res: ServerResponse, signal: AbortSignal) => void, clientGoesAway = false): Promise<AbortSignal> {
  let signal: AbortSignal | undefined;
  const closed = new Promise<void>((resolve) => {
    const server = createServer((_req, res) => {
      signal = requestDoneSignal(res);
      res.once('close', () => setImmediate(() => (server.close(), resolve())));
      handle(res, signal);
    });
    void listenLocal(server).then((port) => {
      const req = httpRequest({ port, host: '127.0.0.1', path: '/' }, (answer) => answer.resume());
      req.on('error', () => undefined);
      req.end();
      if (clientGoesAway) void until(() => signal !== undefined, 'the request').then(() => req.destroy());
    });
  });
  await closed;
  if (signal === undefined) throw new Error('no request reached the handler');
  return signal;
}

describe('a request done signal (spec 3.2 rule 2)', () => {
  it('[SESSION-R2-fallback] a lease the handler forgot is released when the response closes', async () => {
    const scope = new SessionScope({ recentCapacity: 10, logger: createLogger('info', new LogCapture()), timers: new FakeTimers() });
    const signal = await serveOne((res, done) => {
      scope.acquire({ sessionKey: sessionKeyFromVerifiedSubject('alice'), signal: done }); // never released by the handler
      res.end('ok');
    });
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(REQUEST_ENDED);
    await until(() => scope.counts().lingering === 1, 'the fallback release');
    expect(scope.counts()).toEqual({ live: 0, lingering: 1 });
  });

  it('aborts when the client goes away before the handler answered', async () => {
    const signal = await serveOne(() => undefined, true);
    expect(signal.aborted).toBe(true);
  });

  it('[SESSION-R2-fallback] aborts when the handler answered, though nothing listened: a holder that checks `aborted` later sees the request is over', async () => {
    const signal = await serveOne((res) => res.end('ok'));
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(REQUEST_ENDED);
  });
});
