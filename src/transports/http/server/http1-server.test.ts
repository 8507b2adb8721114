import { ServerResponse, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listenLocal } from '../../../../test/support/ports.ts';
import { createHttp1Server } from './http1-server.ts';

const closers: (() => void)[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const close of closers.splice(0)) close();
});

async function server(): Promise<{ emit: (event: string, ...args: unknown[]) => boolean; port: number }> {
  const http = createHttp1Server((_req, res) => res.end('handler'));
  const port = await listenLocal(http);
  closers.push(() => http.close());
  return { emit: (event, ...args) => http.emit(event, ...args), port };
}

/** Writes `head` on a fresh connection; everything read until the server closes it (a second at most). */
function raw(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.setTimeout(1_000, () => socket.destroy(new Error(`connection still open after a second; read ${Buffer.concat(chunks)}`)));
  });
}

/** What answerOnSocket does to a socket, in order: `end <bytes>` and `destroy`. */
function stubSocket(writable = true, inFlight?: { headersSent: boolean }) {
  const calls: string[] = [];
  let flushed: (() => void) | undefined;
  const socket = {
    writable,
    _httpMessage: inFlight,
    destroy: () => void calls.push('destroy'),
    end: (data: string, callback: () => void) => {
      calls.push(`end ${data}`);
      flushed = callback;
    },
  };
  return { socket: socket as unknown as Duplex, calls, flush: () => flushed?.() };
}

function errno(code: string | undefined): NodeJS.ErrnoException {
  return Object.assign(new Error('parse error'), code === undefined ? {} : { code });
}

const BAD_REQUEST =
  'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 23\r\nConnection: close\r\n\r\n{"error":"bad request"}';

describe('HTTP-parser-errors: what never reaches a handler', () => {
  it('broken framing is 400 with the Error body, the reason phrase and nothing else, then the close', async () => {
    const { port } = await server();
    expect(await raw(port, 'NOT HTTP\r\n\r\n')).toBe(BAD_REQUEST);
  });

  it('CONNECT is 405 with Allow naming the methods served', async () => {
    const { port } = await server();
    expect(await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')).toBe(
      'HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nContent-Length: 30\r\n' +
        'Allow: GET, HEAD, POST\r\nConnection: close\r\n\r\n{"error":"method not allowed"}',
    );
  });

  it('an Expect other than 100-continue is 417 and closes the connection', async () => {
    const { port } = await server();
    const answer = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 417 Expectation Failed\r\n/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer.endsWith('\r\n\r\n{"error":"expectation failed"}')).toBe(true);
  });

  it('a peer that reset or went away is owed nothing: the socket is destroyed unwritten', async () => {
    const { emit } = await server();
    for (const code of ['ECONNRESET', 'EPIPE']) {
      const stub = stubSocket();
      emit('clientError', errno(code), stub.socket);
      expect([code, stub.calls]).toStrictEqual([code, ['destroy']]);
    }
    const stub = stubSocket();
    emit('clientError', errno(undefined), stub.socket);
    expect(stub.calls).toStrictEqual([`end ${BAD_REQUEST}`]);
  });

  it('a socket no longer writable, or whose response already started, is destroyed without a second answer', async () => {
    const { emit } = await server();
    for (const stub of [stubSocket(false), stubSocket(true, { headersSent: true })]) {
      emit('clientError', errno('HPE_INVALID_METHOD'), stub.socket);
      expect(stub.calls).toStrictEqual(['destroy']);
    }
    const started = stubSocket(true, { headersSent: false });
    emit('clientError', errno('HPE_INVALID_METHOD'), started.socket);
    expect(started.calls).toStrictEqual([`end ${BAD_REQUEST}`]);
  });

  it('the socket is destroyed once the answer is flushed, or after a second if the peer never reads it', async () => {
    const { emit } = await server();
    vi.useFakeTimers();
    const reader = stubSocket();
    emit('clientError', errno('HPE_INVALID_METHOD'), reader.socket);
    reader.flush();
    expect(reader.calls).toStrictEqual([`end ${BAD_REQUEST}`, 'destroy']);
    const stalled = stubSocket();
    emit('clientError', errno('HPE_INVALID_METHOD'), stalled.socket);
    vi.advanceTimersByTime(999);
    expect(stalled.calls).toStrictEqual([`end ${BAD_REQUEST}`]);
    vi.advanceTimersByTime(1);
    expect(stalled.calls).toStrictEqual([`end ${BAD_REQUEST}`, 'destroy']);
  });
});

describe('createHttp1Server settings', () => {
  it("HTTP-parser-errors: chunk extensions past the parser's limit are 413 with the Error body, then the close", async () => {
    const http = createHttp1Server((req, res) => {
      req.resume();
      req.on('end', () => res.end('handler'));
    });
    const port = await listenLocal(http);
    closers.push(() => http.close());
    const answer = await raw(port, `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(20_000)}\r\n`);
    expect(answer).toBe(
      'HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nContent-Length: 34\r\nConnection: close\r\n\r\n' +
        '{"error":"request body too large"}',
    );
  });

  it("LIMIT-timeouts: a test's shorter timeouts reach the server, alone or with a response class", () => {
    const timeouts = { headersMs: 1_000, requestMs: 2_000, idleMs: 300 };
    const alone = createHttp1Server(() => undefined, { timeouts });
    expect([alone.headersTimeout, alone.requestTimeout, alone.keepAliveTimeout]).toEqual([1_000, 2_000, 300]);
    class Response<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
    const both = createHttp1Server(() => undefined, { timeouts, response: Response });
    expect([both.headersTimeout, both.requestTimeout, both.keepAliveTimeout]).toEqual([1_000, 2_000, 300]);
  });

  it('the response class chosen in composition is the one handlers get (turn-end-response.ts)', async () => {
    class Response<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
    const http = createHttp1Server((_req, res) => res.end(res instanceof Response ? 'chosen' : 'node'), { response: Response });
    const port = await listenLocal(http);
    closers.push(() => http.close());
    expect(await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/\r\n\r\nchosen$/);
  });
});
