import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import { EventEmitter } from 'node:events';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listenLocal } from '../../../../test/support/ports.ts';
import { HANG_GUARD_MS, until } from '../../../../test/support/eventually.ts';
import { createHttp1Server, http1ServerOptions, lingerBeforeClose, oneRequestAtATime } from './http1.ts';

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
    socket.setTimeout(HANG_GUARD_MS, () => socket.destroy(new Error(`connection still open (a hang); read ${Buffer.concat(chunks)}`)));
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

  it('HTTP-parser-errors: garbage after a complete request is answered after that request, which answers once the error is seen', async () => {
    let errorSeen: () => void = () => undefined;
    const seen = new Promise<void>((resolve) => (errorSeen = resolve));
    // The request answers only after the parser has reported the garbage: the 400 must still come second.
    const http = createHttp1Server((_req, res) => void seen.then(() => res.end('handler')));
    http.prependListener('clientError', () => errorSeen());
    const port = await listenLocal(http);
    closers.push(() => http.close());
    const answer = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\nXY');
    const ok = 'HTTP/1.1 200 OK\r\n';
    expect(answer.split(ok).length - 1, answer).toBe(2);
    expect(answer.indexOf('HTTP/1.1 400 Bad Request'), answer).toBeGreaterThan(answer.lastIndexOf(ok));
    expect(answer).toMatch(/\r\n\r\n\{"error":"bad request"\}$/);
  });

  it("LIMIT-timeouts: a test's shorter timeouts reach the server, alone or with a response class", () => {
    const timeouts = { headersMs: 1_000, requestMs: 2_000, idleMs: 300 };
    const alone = createHttp1Server(() => undefined, { timeouts });
    expect([alone.headersTimeout, alone.requestTimeout, alone.keepAliveTimeout]).toEqual([1_000, 2_000, 300]);
    class Response<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
    const both = createHttp1Server(() => undefined, { timeouts, response: Response });
    expect([both.headersTimeout, both.requestTimeout, both.keepAliveTimeout]).toEqual([1_000, 2_000, 300]);
  });

  it("LIMIT-timeouts: the options Node gets are exactly the declared ones, with Node's own response class unless one is chosen", () => {
    const timeouts = { headersMs: 1_000, requestMs: 2_000, idleMs: 300 };
    const declared = {
      headersTimeout: 1_000,
      requestTimeout: 2_000,
      keepAliveTimeout: 300,
      connectionsCheckingInterval: 100,
      requireHostHeader: false,
    };
    expect(http1ServerOptions(timeouts)).toStrictEqual(declared);
    class Response<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
    expect(http1ServerOptions(timeouts, Response)).toStrictEqual({ ...declared, ServerResponse: Response });
  });

  it('the response class chosen in composition is the one handlers get (as the speed ring chooses one)', async () => {
    class Response<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
    const http = createHttp1Server((_req, res) => res.end(res instanceof Response ? 'chosen' : 'node'), { response: Response });
    const port = await listenLocal(http);
    closers.push(() => http.close());
    expect(await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/\r\n\r\nchosen$/);
  });
});

/** A handler that answers 413 and closes before reading a byte of the body, as readBody does on a declared length past the limit. */
const refuseUnread = (_req: IncomingMessage, res: ServerResponse): void => {
  const body = '{"error":"request body too large"}';
  res.writeHead(413, { 'content-type': 'application/json', 'content-length': body.length, connection: 'close' });
  res.end(body);
};

/** A client that declares a 4 MiB body, sends its first KiB, and reports the answer once the server's FIN (not a reset) arrives. */
function oversizedUpload(port: number): Promise<{ socket: Socket; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true }, () => {
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${4 * 1024 * 1024}\r\n\r\n`);
      socket.write('x'.repeat(1024));
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('end', () => resolve({ socket, answer: Buffer.concat(chunks).toString('latin1') }));
    socket.once('error', reject);
  });
}

describe('a closing answer is not lost to a client still sending (RFC 9112 §9.6)', () => {
  it('[HTTP-close-linger, LIMIT-body-size] after a 413 and its FIN the server still reads what the client sends, and closes once the client does', async () => {
    const http = createHttp1Server(refuseUnread);
    const port = await listenLocal(http);
    closers.push(() => http.close());
    const { socket, answer } = await oversizedUpload(port);
    expect(answer).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n[\s\S]*\r\n\r\n\{"error":"request body too large"\}$/);
    // Had the server closed outright, these bytes would meet a closed socket: a reset, seen here as an error.
    const errors: string[] = [];
    socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    for (let sent = 0; sent < 8 && !socket.destroyed; sent += 1) {
      await new Promise<void>((resolve) => socket.write(Buffer.alloc(256 * 1024), () => resolve()));
    }
    await sleep(50);
    socket.end();
    await closed;
    expect(errors).toStrictEqual([]);
    await vi.waitFor(async () => expect(await connections(http)).toBe(0), { timeout: HANG_GUARD_MS, interval: 10 });
  });

  it('[HTTP-close-linger] a client that never closes its side loses the connection after the linger bound', async () => {
    const http = createServer(refuseUnread);
    lingerBeforeClose(http, 50);
    const port = await listenLocal(http);
    closers.push(() => http.close());
    const { socket } = await oversizedUpload(port);
    closers.push(() => socket.destroy());
    // Still held right after the FIN (Node alone would have destroyed it), gone once the bound passes.
    expect(await connections(http)).toBe(1);
    await vi.waitFor(async () => expect(await connections(http)).toBe(0), { timeout: HANG_GUARD_MS, interval: 10 });
  });
});

describe('the staged close itself (lingerBeforeClose), on a stand-in socket and a fake clock', () => {
  /** A socket that records what the close step does to it, on a server that only hands it over. */
  function lingering(lingerMs: number): { socket: EventEmitter & { destroySoon: () => void }; calls: string[] } {
    const server = new EventEmitter();
    lingerBeforeClose(server as never, lingerMs);
    const calls: string[] = [];
    const socket = Object.assign(new EventEmitter(), {
      destroySoon: () => calls.push('node destroySoon'),
      end: () => calls.push('end'),
      destroy: () => calls.push('destroy'),
    });
    server.emit('connection', socket);
    return { socket, calls };
  }

  it('[HTTP-close-linger] sends the FIN at once and destroys exactly at the linger bound', () => {
    vi.useFakeTimers();
    const { socket, calls } = lingering(200);
    socket.destroySoon();
    expect(calls).toStrictEqual(['end']);
    vi.advanceTimersByTime(199);
    expect(calls).toStrictEqual(['end']);
    vi.advanceTimersByTime(1);
    expect(calls).toStrictEqual(['end', 'destroy']);
  });

  it('[HTTP-close-linger] the linger timer keeps no process alive', () => {
    // Node lists a timer among the active resources only while it is ref'd.
    const refTimers = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const { socket, calls } = lingering(60_000);
    const before = refTimers();
    socket.destroySoon();
    const after = refTimers();
    socket.emit('close');
    expect(after).toBe(before);
    expect(calls).toStrictEqual(['end']);
  });

  it('[HTTP-close-linger] a socket that closes first leaves no linger timer behind', () => {
    vi.useFakeTimers();
    const { socket, calls } = lingering(200);
    socket.destroySoon();
    expect(vi.getTimerCount()).toBe(1);
    socket.emit('close');
    expect(vi.getTimerCount()).toBe(0);
    expect(calls).toStrictEqual(['end']);
  });
});

function connections(server: { getConnections(callback: (error: Error | null, count: number) => void): void }): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((error, count) => (error === null ? resolve(count) : reject(error))));
}

const ANSWER = Buffer.alloc(1024 * 1024, 0x61);

let gateServer: Server | undefined;
const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  gateServer?.close();
});

function cleanupSocket(socket: Socket): void {
  sockets.push(socket);
}

/** A node:http server whose handler answers 1 MB per request, counting the requests it ran. */
async function serve(gated: boolean): Promise<{ port: number; ran: () => number }> {
  let ran = 0;
  const handler = (_req: unknown, res: { end(body: Buffer): void }): void => {
    ran += 1;
    // Answered on a later turn, as a handler that awaits a store is.
    setImmediate(() => res.end(ANSWER));
  };
  gateServer = createServer(gated ? oneRequestAtATime(handler as never) : (handler as never));
  await new Promise<void>((resolve) => gateServer!.listen(0, '127.0.0.1', resolve));
  return { port: (gateServer.address() as AddressInfo).port, ran: () => ran };
}

function pipeline(port: number, count: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(count));
      resolve(socket);
    });
  });
}

/** Reads `count` answers of ANSWER's size off `socket`; resolves with how many arrived. */
function readAll(socket: Socket, count: number): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    let answers = 0;
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      answers = Math.floor(bytes / ANSWER.length);
      if (answers >= count) resolve(answers);
    });
    socket.once('close', () => resolve(answers));
  });
}

describe('pipelined HTTP/1.1 requests (rule HTTP1-pipeline-bound)', () => {
  it('[HTTP1-pipeline-bound] a client that does not read its answers gets no request run beyond the kernel buffers, and every answer once it reads', async () => {
    const { port, ran } = await serve(true);
    // 30 requests of 1 MB answers, nothing read: the kernel's socket buffers take a few answers, the
    // process holds one, and the rest wait unparsed-for work.
    const socket = await pipeline(port, 30);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const runWhileNotReading = ran();
    expect(runWhileNotReading).toBeLessThan(30);
    const read = await readAll(socket, 30);
    socket.destroy();
    expect(read).toBe(30);
    expect(ran()).toBe(30);
  });

  it('[HTTP1-pipeline-bound] without the gate Node runs every pipelined request at once (what the gate prevents)', async () => {
    const { port, ran } = await serve(false);
    const socket = await pipeline(port, 30);
    // Every one runs while the client reads nothing (the gated server above runs fewer, however long it waits).
    await until(() => ran() === 30, 'every pipelined request to run');
    socket.destroy();
  });

  it('[HTTP1-pipeline-bound] more requests waiting than the depth close the connection', async () => {
    let ran = 0;
    gateServer = createServer(oneRequestAtATime(() => void (ran += 1), 4));
    await new Promise<void>((resolve) => gateServer!.listen(0, '127.0.0.1', resolve));
    const socket = await pipeline((gateServer.address() as AddressInfo).port, 10);
    const closed = await new Promise<boolean>((resolve) => {
      socket.resume();
      socket.once('close', () => resolve(true));
    });
    expect(closed).toBe(true);
    // The first ran and never answered: nothing behind it did.
    expect(ran).toBe(1);
  });

  it('[HTTP1-pipeline-bound] a request after the pipeline drained runs at once, as the first one did', async () => {
    gateServer = createServer(oneRequestAtATime((_req, res) => res.end('ok')));
    await new Promise<void>((resolve) => gateServer!.listen(0, '127.0.0.1', resolve));
    const socket = await pipeline((gateServer.address() as AddressInfo).port, 2);
    cleanupSocket(socket);
    let text = '';
    const answers = (count: number): Promise<void> =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (text.split('HTTP/1.1 200').length - 1 >= count) resolve();
        };
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
          check();
        });
        check();
        socket.setTimeout(HANG_GUARD_MS, () => reject(new Error(`${count} answers expected, read ${text}`)));
      });
    await answers(2);
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await answers(3);
  });

  it('[HTTP1-pipeline-bound] exactly the depth may wait: one more closes the connection unanswered', async () => {
    gateServer = createServer(oneRequestAtATime((_req, res) => res.end('ok'), 4));
    await new Promise<void>((resolve) => gateServer!.listen(0, '127.0.0.1', resolve));
    const port = (gateServer.address() as AddressInfo).port;
    /** Everything read off a pipeline of `count` until `answers` arrived or the gateServer closed it. */
    const answered = async (count: number, answers: number): Promise<{ answers: number; closed: boolean }> => {
      const socket = await pipeline(port, count);
      return new Promise((resolve, reject) => {
        let text = '';
        const seen = (): number => text.split('HTTP/1.1 200').length - 1;
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
          if (seen() >= answers) resolve({ answers: seen(), closed: false });
        });
        socket.once('close', () => resolve({ answers: seen(), closed: true }));
        socket.setTimeout(HANG_GUARD_MS, () => reject(new Error(`${count} pipelined: ${seen()} answers and still open (a hang)`)));
        cleanupSocket(socket);
      });
    };
    // One running and four waiting: all five answered on the open connection.
    expect(await answered(5, 5)).toStrictEqual({ answers: 5, closed: false });
    // A fifth waiting: closed with at most the running one answered.
    const over = await answered(6, 6);
    expect(over.closed).toBe(true);
    expect(over.answers).toBeLessThan(2);
  });
  it('[HTTP1-pipeline-bound] a request waiting behind one whose connection closed never runs, even when that one ends after the close', async () => {
    // Node emits 'finish' for a response ended after its socket closed once its headers went out: the
    // gate must have dropped the connection's queue at the close, or that 'finish' runs the next one.
    const runs: string[] = [];
    const ranAtFinish = new Promise<string[]>((resolve) => {
      gateServer = createServer(
        oneRequestAtATime((req, res) => {
          runs.push(req.url ?? '');
          if (req.url !== '/first') return void res.end('ok');
          res.writeHead(200, { 'content-length': '0' });
          res.flushHeaders();
          let finished = false;
          res.once('finish', () => (finished = true));
          res.once('close', () => {
            res.end();
            // 'finish' comes on the next tick, after the gate's own 'finish' handler ran.
            setImmediate(() => resolve(finished ? [...runs] : ['no finish after the close']));
          });
        }),
      );
    });
    await new Promise<void>((resolve) => gateServer!.listen(0, '127.0.0.1', resolve));
    const socket = connect({ host: '127.0.0.1', port: (gateServer!.address() as AddressInfo).port });
    cleanupSocket(socket);
    socket.write('GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n');
    // The first answer's head arrived: both requests were parsed (one write); the client goes away.
    socket.once('data', () => socket.destroy());
    expect(await ranAtFinish).toStrictEqual(['/first']);
  });
});
