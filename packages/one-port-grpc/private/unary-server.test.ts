// The unary server on a plain node:http2 server: requests a gRPC client would not send, and what its observer is told (rules GRPC-*).
import { AsyncLocalStorage } from 'node:async_hooks';
import { once } from 'node:events';
import {
  connect,
  constants as h2,
  createServer,
  type ClientHttp2Session,
  type Http2Server,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { create } from '@bufbuild/protobuf';
import { EmptySchema } from '@bufbuild/protobuf/wkt';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { settled, until } from '../../../test/support/eventually.ts';
import { createUnaryServer, type ServerStreamMethod, type UnaryCall, type UnaryMethod } from './unary-server.ts';
import { Status } from './wire.ts';

/**
 * The unary server on a plain node:http2 server (no one-port dispatcher in front, which routes only
 * requests with a gRPC Content-Type here): what it does with requests that lack the headers a gRPC
 * client always sends, with Content-Types the dispatcher would route elsewhere, and what its observer is
 * told of them.
 */
let server: Http2Server;
let origin: string;
const observed: Array<[string, string | undefined, number | undefined]> = [];
/** The observer's scope each call runs in (observe.scope), and whether the server has closed it. */
const scopes = new AsyncLocalStorage<{ closed: boolean }>();
/** What `/t.T/Scoped` sees of its scope: while it runs, and from a timer it started that fires after its answer. */
let inScope: { during?: boolean; after?: Promise<boolean | undefined> } = {};
/** Errors `toStatus` was asked to map. */
const mapped: unknown[] = [];
/** Calls of `/t.T/Wait` whose handler started. */
let waiting = 0;

beforeAll(async () => {
  const handler = createUnaryServer<undefined>({
    methods: new Map<string, UnaryMethod<undefined> | ServerStreamMethod<undefined>>([
      ['/t.T/Unary', { input: EmptySchema, output: EmptySchema, handle: () => Promise.resolve(create(EmptySchema)) }],
      // A server stream that ends without a message.
      ['/t.T/Quiet', { kind: 'server-stream', input: EmptySchema, output: EmptySchema, handle: () => Promise.resolve() }],
      [
        '/t.T/Scoped',
        {
          input: EmptySchema,
          output: EmptySchema,
          handle: () => {
            inScope.during = scopes.getStore()?.closed === false;
            // A timer the call starts runs in its async context, after its answer.
            inScope.after = new Promise((resolve) => setImmediate(() => resolve(scopes.getStore()?.closed)));
            return Promise.resolve(create(EmptySchema));
          },
        },
      ],
      // Waits for the call's end, then rejects with the done signal's reason, as an aborted wait does.
      [
        '/t.T/Wait',
        {
          input: EmptySchema,
          output: EmptySchema,
          handle: (_req: unknown, call: UnaryCall<undefined>) => {
            waiting += 1;
            return new Promise<never>((_resolve, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason)));
          },
        },
      ],
    ]),
    authenticate: () => undefined,
    toStatus: (error) => {
      mapped.push(error);
      return { code: 13, message: 'internal server error' };
    },
    observe: {
      start: (path, kind) => {
        const entry: [string, string | undefined, number | undefined] = [path, kind, undefined];
        observed.push(entry);
        return { end: (code) => (entry[2] = code) };
      },
      scope: (work) => {
        const scope = { closed: false };
        scopes.run(scope, () => work(() => (scope.closed = true)));
      },
    },
  });
  server = createServer(handler);
  // Node answers CONNECT (the one request without :path) 405 itself unless someone listens for it; the
  // one-port server does not, so only a server wired like this one hands the unary server such a request.
  server.on('connect', handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** One request, its body (if any) and its end; the answer's headers with its trailers (if any) over them. */
function call(headers: OutgoingHttpHeaders, body?: Buffer): Promise<IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    session.on('error', reject);
    const stream = session.request(headers);
    stream.on('error', () => undefined);
    let reply: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    stream.once('response', (h) => (reply = h));
    stream.once('trailers', (t) => (trailers = t));
    stream.resume();
    stream.once('close', () => {
      session.destroy();
      resolve({ ...reply, ...trailers });
    });
    stream.end(body);
  });
}

describe('requests without the headers of a gRPC call', () => {
  it('no :path (CONNECT): UNIMPLEMENTED `unknown service or method`, observed as the empty path', async () => {
    observed.length = 0;
    const reply = await call({ ':method': 'CONNECT', ':authority': 'example:443', 'content-type': 'application/grpc' });
    expect([reply[':status'], reply['grpc-status'], reply['grpc-message']]).toEqual([200, '12', 'unknown service or method']);
    expect(observed).toEqual([['', undefined, 12]]);
  });

  it('no Content-Type (GRPC-content-type): HTTP 415, UNIMPLEMENTED `unsupported content type`', async () => {
    const reply = await call({ ':method': 'POST', ':path': '/t.T/M' });
    expect([reply[':status'], reply['grpc-status'], reply['grpc-message']]).toEqual([415, '12', 'unsupported content type']);
  });
});

describe('calls the unary server serves', () => {
  const emptyMessage = Buffer.from([0, 0, 0, 0, 0]);
  const post = (path: string, contentType: string): Promise<IncomingHttpHeaders> =>
    call({ ':method': 'POST', ':path': path, 'content-type': contentType }, emptyMessage);

  it.each([
    ['application/grpc; charset=utf-8', 200, '0'],
    ['application/grpc+proto;x=1', 200, '0'],
    ['text/application/grpc', 415, '12'],
    ['xapplication/grpc', 415, '12'],
    ['application/grpc+json; charset=utf-8', 415, '12'],
  ])('GRPC-content-type: %s → HTTP %i, grpc-status %s', async (contentType, status, grpcStatus) => {
    const reply = await post('/t.T/Unary', contentType);
    expect([reply[':status'], reply['grpc-status']]).toEqual([status, grpcStatus]);
  });

  it('METRICS-grpc, TRACE-grpc: the observer is told each call’s kind, unary or server_stream, and the status it ended with', async () => {
    observed.length = 0;
    for (const path of ['/t.T/Unary', '/t.T/Quiet']) expect((await post(path, 'application/grpc'))['grpc-status']).toBe('0');
    expect(observed).toEqual([
      ['/t.T/Unary', 'unary', 0],
      ['/t.T/Quiet', 'server_stream', 0],
    ]);
  });

  it.each(['1Sx', '5mjunk'])(
    'GRPC-timeout-clamp: grpc-timeout %o (a valid timeout, then more) is refused INVALID_ARGUMENT `malformed grpc-timeout`',
    async (timeout) => {
      observed.length = 0;
      const reply = await call(
        { ':method': 'POST', ':path': '/t.T/Unary', 'content-type': 'application/grpc', 'grpc-timeout': timeout },
        emptyMessage,
      );
      expect([reply[':status'], reply['grpc-status'], reply['grpc-message']]).toEqual([200, '3', 'malformed grpc-timeout']);
      expect(observed).toEqual([['/t.T/Unary', 'unary', 3]]);
    },
  );

  it('a server stream that ends OK before any message is answered trailers-only: grpc-status 0 and no message text', async () => {
    const reply = await post('/t.T/Quiet', 'application/grpc');
    expect([reply[':status'], reply['grpc-status'], reply['grpc-message'] ?? '']).toEqual([200, '0', '']);
  });
});

/**
 * The trailers-only answer itself (`answer` in unary-server.ts), on a plain node:http2 server with one
 * stream slot per connection and a request listener that can answer, close or destroy a stream before the
 * unary server gets it: no session guard (http2-limits.ts) in front, so what is seen is the unary
 * server's own doing. The listener starts on the next turn of the loop, as the one-port dispatcher does
 * (by then a request's END_STREAM read with its HEADERS frame is in the stream's state).
 */
describe('the trailers-only answer', () => {
  let plain: Http2Server;
  let plainOrigin: string;
  let handler: ReturnType<typeof createUnaryServer<undefined>>;
  interface Handed {
    readonly headersSent: boolean;
    readonly closed: boolean;
    readonly destroyed: boolean;
    readonly threw: unknown;
  }
  /** The stream as the unary server got it (after the `x-before` treatment), and what the server threw. */
  const handed: Handed[] = [];

  beforeAll(async () => {
    handler = createUnaryServer<undefined>({
      methods: new Map([['/t.T/M', { input: EmptySchema, output: EmptySchema, handle: () => Promise.resolve(create(EmptySchema)) }]]),
      authenticate: () => undefined,
      toStatus: () => ({ code: Status.INTERNAL, message: 'internal server error' }),
    });
    plain = createServer({ settings: { maxConcurrentStreams: 1 } }, (req, res) =>
      setImmediate(() => {
        const before = req.headers['x-before'];
        if (before === 'answered') handler(req, res);
        else if (before === 'closed') req.stream.close(h2.NGHTTP2_CANCEL);
        else if (before === 'destroyed') req.stream.destroy();
        const { headersSent, closed, destroyed } = req.stream;
        let threw: unknown;
        try {
          handler(req, res);
        } catch (error) {
          threw = error;
        }
        handed.push({ headersSent, closed, destroyed, threw });
      }),
    );
    plain.listen(0, '127.0.0.1');
    await once(plain, 'listening');
    plainOrigin = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => plain.close(() => resolve())));

  interface StreamEnd {
    readonly responses: IncomingHttpHeaders[];
    readonly rstCode: number | undefined;
    /** Whether the client had ended its request when the stream closed. */
    readonly requestEnded: boolean;
  }

  /** One stream on `session`: its headers, then `body` written and the request ended or not; settles on close. */
  function exchange(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body: Buffer | undefined, end: boolean): Promise<StreamEnd> {
    return new Promise((resolve) => {
      const stream = session.request(headers, { endStream: body === undefined && end });
      stream.on('error', () => undefined);
      const responses: IncomingHttpHeaders[] = [];
      stream.on('response', (h) => responses.push(h));
      stream.resume();
      let requestEnded = body === undefined && end;
      stream.once('close', () => resolve({ responses, rstCode: stream.rstCode, requestEnded }));
      if (body !== undefined) stream.write(body);
      if (body !== undefined && end) {
        requestEnded = true;
        stream.end();
      }
    });
  }

  async function withSession<T>(work: (session: ClientHttp2Session) => Promise<T>): Promise<T> {
    const session = connect(plainOrigin);
    session.on('error', () => undefined);
    try {
      return await work(session);
    } finally {
      session.destroy();
    }
  }

  const refusedOnItsHeaders = { ':method': 'POST', ':path': '/t.T/M', 'content-type': 'application/grpc+json' };

  it('a refusal is one HEADERS frame: HTTP 415, content-type application/grpc+proto, grpc-status and grpc-message (GRPC-content-type)', async () => {
    const end = await withSession((s) => exchange(s, refusedOnItsHeaders, undefined, true));
    expect(end.responses).toHaveLength(1);
    const [reply] = end.responses;
    expect([reply![':status'], reply!['content-type'], reply!['grpc-status'], reply!['grpc-message']]).toEqual([
      415,
      'application/grpc+proto',
      '12',
      'unsupported content type',
    ]);
  });

  // No caller in the service hands the unary server such a stream (the one-port dispatcher skips streams
  // already closed, rule H2-rapid-reset, and a call's own answer looks first): this is the answer's own
  // promise, for whoever calls it. Without it Node's respond() throws out of the request listener
  // (ERR_HTTP2_HEADERS_SENT, ERR_HTTP2_INVALID_STREAM).
  it.each([
    // Answered by the unary server itself, its request ended: not reset, so not closed yet either (only
    // `headersSent` tells it was answered).
    ['answered', { headersSent: true, closed: false, destroyed: false }, [415]],
    ['closed', { headersSent: false, closed: true, destroyed: false }, []],
    ['destroyed', { destroyed: true }, []],
  ] as const)('a stream already %s gets no second answer, and the server throws nothing', async (before, state, statuses) => {
    handed.length = 0;
    const end = await withSession((s) => exchange(s, { ...refusedOnItsHeaders, 'x-before': before }, undefined, true));
    expect(handed).toEqual([expect.objectContaining({ ...state, threw: undefined })]);
    expect(end.responses.map((h) => h[':status'])).toEqual(statuses);
  });

  it('a call refused while its client is still sending is reset with NO_ERROR, and frees its stream slot (RFC 9113 8.1, H2-stream-slot)', async () => {
    // A prefix declaring 5 MiB (over GRPC-message-size's 1 MiB), read by the call, then refused while
    // the request stays open; one slot per connection, so each next call waits for the last one's.
    const oversized = Buffer.alloc(5 + 1000);
    oversized.writeUInt32BE(5 * 1024 * 1024, 1);
    const grpc = { ':method': 'POST', ':path': '/t.T/M', 'content-type': 'application/grpc' };
    const ends: StreamEnd[] = [];
    const session = connect(plainOrigin);
    session.on('error', () => undefined);
    try {
      const calls = (async () => {
        for (let i = 0; i < 3; i++) ends.push(await exchange(session, grpc, oversized, false));
        ends.push(await exchange(session, grpc, Buffer.from([0, 0, 0, 0, 0]), true)); // an empty message: OK
      })();
      // A stream left open holds the one slot: the calls after it are never sent.
      await settled(calls, 'the four calls, each in the slot the last one freed');
    } finally {
      session.destroy();
    }
    const refused = ends
      .slice(0, 3)
      .map((e) => [e.responses.map((h) => [h['content-type'], h['grpc-status'], h['grpc-message']]), e.rstCode, e.requestEnded]);
    expect(refused).toEqual(
      Array(3).fill([[['application/grpc+proto', '8', 'request message larger than 1048576 bytes']], h2.NGHTTP2_NO_ERROR, false]),
    );
    expect(ends[3]!.responses.map((h) => h[':status'])).toEqual([200]);
  });
});

describe('the ends of a call', () => {
  afterEach(() => vi.useRealTimers());
  const emptyMessage = Buffer.from([0, 0, 0, 0, 0]);
  const grpc = { ':method': 'POST', 'content-type': 'application/grpc' };

  it('GRPC-timeout-clamp: a call answered before its grpc-timeout leaves no deadline timer behind once its stream closed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const reply = await call({ ...grpc, ':path': '/t.T/Unary', 'grpc-timeout': '1H' }, emptyMessage);
    expect(reply['grpc-status']).toBe('0');
    // The server's stream closes on its own turn after the client's: the hour-long timer is gone with it.
    await until(() => vi.getTimerCount() === 0, 'the deadline timer cleared');
  });

  it('TRACE-log-ids: a call runs in its observer’s scope, closed once answered: a timer the call started finds it closed', async () => {
    inScope = {};
    expect((await call({ ...grpc, ':path': '/t.T/Scoped' }, emptyMessage))['grpc-status']).toBe('0');
    expect([inScope.during, await inScope.after]).toEqual([true, true]);
  });

  it('GRPC-cancel: work that rejects with the call’s own done signal once the call ended is not a failure to map', async () => {
    mapped.length = 0;
    observed.length = 0;
    const reply = await call({ ...grpc, ':path': '/t.T/Wait', 'grpc-timeout': '100m' }, emptyMessage);
    expect([reply['grpc-status'], reply['grpc-message']]).toEqual(['4', 'deadline exceeded']);
    await new Promise((resolve) => setImmediate(resolve));
    expect([waiting, mapped, observed]).toEqual([1, [], [['/t.T/Wait', 'unary', Status.DEADLINE_EXCEEDED]]]);
  });

  it('GRPC-cancel: a call reset by its client in the middle of its message is observed CANCELLED, not as a malformed message', async () => {
    observed.length = 0;
    const session = connect(origin);
    session.on('error', () => undefined);
    try {
      const stream = session.request({ ...grpc, ':path': '/t.T/Unary' });
      stream.on('error', () => undefined);
      const prefix = Buffer.from([0, 0, 0, 0, 10]);
      stream.write(Buffer.concat([prefix, Buffer.from('12345')]));
      await until(() => observed.length === 1, 'the call started');
      // RST_STREAM without END_STREAM first (close() would end the request, a cut message, before its reset).
      stream.destroy();
      await until(() => observed[0]![2] !== undefined, 'the call observed ended');
    } finally {
      session.destroy();
    }
    expect(observed).toEqual([['/t.T/Unary', 'unary', Status.CANCELLED]]);
  });

  it('GRPC-timeout-clamp: a call past its deadline while its message arrives is answered DEADLINE_EXCEEDED and its handler never runs', async () => {
    // A stream of the test's own (the unary server reads only these members), so the message's end comes after the deadline.
    let handled = 0;
    const handler = createUnaryServer<undefined>({
      methods: new Map([
        ['/t.T/M', { input: EmptySchema, output: EmptySchema, handle: () => ((handled += 1), Promise.resolve(create(EmptySchema))) }],
      ]),
      authenticate: () => undefined,
      toStatus: () => ({ code: Status.INTERNAL, message: 'internal server error' }),
    });
    const responded: OutgoingHttpHeaders[] = [];
    let onRespond: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (onRespond = resolve));
    const stream = Object.assign(new PassThrough(), {
      // The client has sent END_STREAM; its last bytes are still on their way to the reader.
      state: { remoteClose: true },
      headersSent: false,
      respond(headers: OutgoingHttpHeaders) {
        responded.push(headers);
        onRespond();
      },
      close: () => undefined,
    });
    const headers = { ...grpc, ':path': '/t.T/M', 'grpc-timeout': '1m' };
    handler({ headers, stream, socket: { remoteAddress: '127.0.0.1' } } as never, {} as never);
    stream.write(emptyMessage);
    await answered;
    const ended = once(stream, 'end');
    stream.end();
    await ended;
    await new Promise((resolve) => setImmediate(resolve));
    expect(responded.map((h) => [h['grpc-status'], h['grpc-message']])).toEqual([['4', 'deadline exceeded']]);
    expect(handled).toBe(0);
  });

  it('GRPC-cancel: a stream closed by a reset (before its `close` event) while the reply is on its way takes no answer, and the call is observed CANCELLED', async () => {
    const ends: number[] = [];
    const written: string[] = [];
    const responded: OutgoingHttpHeaders[] = [];
    // Unanswered, a real stream stays open after the request's end: no 'close' of its own.
    const stream = Object.assign(new PassThrough({ autoDestroy: false }), {
      state: { remoteClose: true },
      headersSent: false,
      respond: (headers: OutgoingHttpHeaders) => responded.push(headers),
      close: () => undefined,
    });
    const handler = createUnaryServer<undefined>({
      methods: new Map([
        [
          '/t.T/M',
          {
            input: EmptySchema,
            output: EmptySchema,
            handle: () => {
              // What Node's stream is after a client's RST_STREAM, until its request's end is read and it emits 'close': closed, not destroyed.
              Object.defineProperty(stream, 'closed', { value: true });
              return Promise.resolve(create(EmptySchema));
            },
          },
        ],
      ]),
      authenticate: () => undefined,
      toStatus: () => ({ code: Status.INTERNAL, message: 'internal server error' }),
      observe: { start: () => ({ end: (code) => ends.push(code) }) },
    });
    const res = {
      headersSent: false,
      writeHead: () => written.push('headers'),
      addTrailers: () => written.push('trailers'),
      end: () => written.push('end'),
      write: () => written.push('message'),
    };
    handler({ headers: { ...grpc, ':path': '/t.T/M' }, stream, socket: { remoteAddress: '127.0.0.1' } } as never, res as never);
    stream.end(emptyMessage);
    await until(() => ends.length > 0, 'the call observed ended');
    expect(ends).toEqual([Status.CANCELLED]);
    expect([written, responded]).toEqual([[], []]);
  });
});
