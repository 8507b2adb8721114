// The HTTP/2 session guard from a client's side of the wire, one rule each (rules H2-*), with short limits.
import { once } from 'node:events';
import {
  connect,
  constants as h2,
  createServer,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
  type Settings,
} from 'node:http2';
import { connect as tcpConnect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { settled } from '../../../test/support/eventually.ts';
import { dispatchGuarded, guardSession, HTTP2_RESET_ALLOWANCE, type Http2Limits } from './http2-limits.ts';
import { createOnePortServer } from './front.ts';

/**
 * The session guard on a bare node:http2 server (no one-port front, no app), with short limits: each
 * test sees one rule of the guard from the client's side of the wire, in well under a second.
 */
type Handler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

interface Guarded {
  readonly origin: string;
  readonly sessions: ServerHttp2Session[];
  readonly sessionErrors: Error[];
  /** Resolves once `n` streams have closed on the server, each after the guard has counted it. */
  readonly closedOnServer: (n: number) => Promise<void>;
}

const servers: Http2Server[] = [];
/** Every server session's close: the guard's shared ticker stops once the last has closed. */
const sessionsClosed: Array<Promise<unknown>> = [];
const clients: ClientHttp2Session[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  for (const s of servers.splice(0)) {
    const closed = new Promise((resolve) => s.close(resolve));
    // Sessions left open would hold the close.
    (s as unknown as { closeAllSessions?: () => void }).closeAllSessions?.();
    await closed;
  }
  await Promise.all(sessionsClosed.splice(0));
});

async function guarded(guard: Http2Limits, handler: Handler, settings: Settings = {}): Promise<Guarded> {
  const sessions: ServerHttp2Session[] = [];
  const sessionErrors: Error[] = [];
  let closed = 0;
  const waiters: Array<() => void> = [];
  const closedOnServer = async (n: number): Promise<void> => {
    while (closed < n) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  const server = createServer({ settings }, (req, res) => dispatchGuarded(req.stream, () => handler(req, res)));
  server.on('session', (session: ServerHttp2Session) => {
    sessions.push(session);
    sessionsClosed.push(new Promise((resolve) => session.once('close', resolve)));
    guardSession(session, guard);
    // Attached after the guard's own listeners: runs once the guard has counted the stream.
    session.on('stream', (stream) =>
      stream.once('close', () => {
        closed += 1;
        for (const wake of waiters.splice(0)) wake();
      }),
    );
  });
  server.on('sessionError', (error: Error) => sessionErrors.push(error));
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sessions, sessionErrors, closedOnServer };
}

async function client(origin: string, settings: Settings = {}): Promise<ClientHttp2Session> {
  const session = connect(origin, { settings });
  session.on('error', () => undefined);
  clients.push(session);
  await once(session, 'remoteSettings');
  return session;
}

/** The GOAWAY code the session gets, or undefined if it closes without one. */
function goawayOf(session: ClientHttp2Session): Promise<number | undefined> {
  return new Promise((resolve) => {
    let code: number | undefined;
    session.once('goaway', (c: number) => (code = c));
    session.once('close', () => resolve(code));
  });
}

interface Outcome {
  readonly status: string | undefined;
  readonly body: string;
  readonly rstCode: number | undefined;
}

/** A stream's answer and how it ended, once it closes. */
function outcome(stream: ClientHttp2Stream): Promise<Outcome> {
  let status: string | undefined;
  let body = '';
  stream.on('error', () => undefined);
  stream.once('response', (h) => (status = String(h[':status'])));
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => (body += chunk));
  return new Promise((resolve) => stream.once('close', () => resolve({ status, body, rstCode: stream.rstCode })));
}

/**
 * Opens streams until one is refused with REFUSED_STREAM (the guard looks every 10 ms); returns how many
 * were opened. The others are answered and their answers wait in the zero window.
 */
async function untilRefused(s: ClientHttp2Session): Promise<number> {
  for (let opened = 1; opened <= 100; opened++) {
    const stream = s.request({ ':method': 'GET', ':path': '/0' });
    stream.on('error', () => undefined);
    const refused = await new Promise<boolean>((resolve) => {
      stream.once('response', () => resolve(false));
      stream.once('close', () => resolve(stream.rstCode === h2.NGHTTP2_REFUSED_STREAM));
    });
    if (refused) return opened;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('no stream refused after 100');
}

const post: OutgoingHttpHeaders = { ':method': 'POST', ':path': '/' };

describe('guardSession: the request deadline of each stream (rule H2-stream-deadline)', () => {
  it('a stream whose client never finishes its request is reset with CANCEL at the configured deadline', async () => {
    const { origin } = await guarded({ streamRequestMs: 50 }, () => undefined);
    const s = await client(origin);
    const stream = s.request(post);
    stream.write('part of a body');
    const ended = outcome(stream);
    await settled(ended, 'the stream reset at its request deadline');
    expect((await ended).rstCode).toBe(h2.NGHTTP2_CANCEL);
  });

  it('a stream whose request is complete is not reset at the deadline: its answer may come later', async () => {
    const { origin } = await guarded({ streamRequestMs: 30 }, (_req, res) => void setTimeout(() => res.end('late'), 150));
    const s = await client(origin);
    const stream = s.request(post);
    stream.end('whole body');
    expect(await outcome(stream)).toEqual({ status: '200', body: 'late', rstCode: h2.NGHTTP2_NO_ERROR });
  });
});

/** `/park` answers its headers and a first byte and never ends; anything else is answered `ok` at once. */
const parkOrEcho: Handler = (req, res) => {
  if (req.url === '/park') {
    res.writeHead(200);
    res.write(' ');
  } else res.end('ok');
};

describe('guardSession: resets counted against completed streams (rule H2-rapid-reset)', () => {
  /** A stream the server has answered the headers of, then reset by the client with CANCEL. */
  const resetOne = async (s: ClientHttp2Session): Promise<void> => {
    const stream = s.request({ ':method': 'GET', ':path': '/park' });
    stream.on('error', () => undefined);
    await once(stream, 'response');
    stream.close(h2.NGHTTP2_CANCEL);
  };
  const completeOne = async (s: ClientHttp2Session): Promise<void> => {
    expect((await outcome(s.request({ ':method': 'GET', ':path': '/echo' }))).body).toBe('ok');
  };

  it('a client that resets more streams than the allowance, completing none, gets GOAWAY ENHANCE_YOUR_CALM', async () => {
    const { origin, sessions, sessionErrors, closedOnServer } = await guarded({}, parkOrEcho);
    const s = await client(origin);
    const goaway = goawayOf(s);
    for (let i = 1; i <= HTTP2_RESET_ALLOWANCE; i++) {
      await resetOne(s);
      await closedOnServer(i);
    }
    expect(sessions[0]!.destroyed).toBe(false);
    await resetOne(s);
    await closedOnServer(HTTP2_RESET_ALLOWANCE + 1);
    expect(sessions[0]!.destroyed).toBe(true);
    expect(await goaway).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
    // What the server's 'sessionError' listeners see.
    expect(sessionErrors.map((e) => e.message)).toEqual(['http2: session closed for abuse']);
  });

  it('resets past the allowance are tolerated while they are no more than the completed streams', async () => {
    const completed = HTTP2_RESET_ALLOWANCE + 1;
    const { origin, sessions, closedOnServer } = await guarded({}, parkOrEcho);
    const s = await client(origin);
    const goaway = goawayOf(s);
    for (let i = 0; i < completed; i++) await completeOne(s);
    // As many resets as completed streams: still served.
    for (let i = 1; i <= completed; i++) {
      await resetOne(s);
      await closedOnServer(completed + i);
    }
    expect(sessions[0]!.destroyed).toBe(false);
    // One more reset than completed streams: cut.
    await resetOne(s);
    await closedOnServer(2 * completed + 1);
    expect(sessions[0]!.destroyed).toBe(true);
    expect(await goaway).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
  });

  it('streams the guard resets itself at their deadline count as completed, not as the client’s resets', async () => {
    const streams = HTTP2_RESET_ALLOWANCE + 6;
    const { origin, sessions, closedOnServer } = await guarded({ streamRequestMs: 50 }, parkOrEcho, { maxConcurrentStreams: 2 * streams });
    const s = await client(origin);
    const ended = Array.from({ length: streams }, () => {
      const stream = s.request({ ':method': 'POST', ':path': '/park' });
      stream.write('never finished');
      return outcome(stream);
    });
    await settled(Promise.all(ended), 'every stream reset at its request deadline');
    for (const e of await Promise.all(ended)) expect(e.rstCode).toBe(h2.NGHTTP2_CANCEL);
    await closedOnServer(streams);
    expect(sessions[0]!.destroyed).toBe(false);
    await completeOne(s);
  });
});

describe('guardSession: a stream answered before its request was read is ended (rule H2-stream-slot)', () => {
  it('the client still sending gets RST_STREAM(NO_ERROR) after the answer, so the stream closes on both sides', async () => {
    const { origin } = await guarded({}, (_req, res) => res.end('early'));
    const s = await client(origin);
    const stream = s.request(post);
    stream.write('the start of a body that never ends');
    const ended = outcome(stream);
    await settled(ended, 'the stream ended after its early answer');
    expect(await ended).toEqual({ status: '200', body: 'early', rstCode: h2.NGHTTP2_NO_ERROR });
  });

  it('a request read in part, then left paused by its handler, is drained: its slot frees for the next stream', async () => {
    // One stream at a time, so the next request runs only once the first has closed on the server. The
    // handler reads the first chunk, stops reading (as a body-size limit does) and answers 413: the
    // request object's own 'data' listener must not pause the stream again when its buffer fills.
    const handler: Handler = (req, res) => {
      if (req.url !== '/limited') return void res.end('ok');
      req.once('data', () => {
        req.pause();
        // Answered once the request object's buffer is full: the stream under it is paused.
        const answerWhenFull = (): void => {
          if (req.readableLength < req.readableHighWaterMark) return void setImmediate(answerWhenFull);
          res.statusCode = 413;
          res.end('too large');
        };
        answerWhenFull();
      });
    };
    const { origin } = await guarded({ activeStreams: 1 }, handler);
    const s = await client(origin);
    const big = s.request({ ':method': 'POST', ':path': '/limited' });
    big.on('error', () => undefined);
    // More than the request object buffers; the client's own stream stays open with what it could not send.
    big.write(Buffer.alloc(256 * 1024, 0x61));
    const [headers] = (await once(big, 'response')) as [IncomingHttpHeaders];
    expect(headers[':status']).toBe(413);
    const next = outcome(s.request({ ':method': 'GET', ':path': '/echo' }));
    await settled(next, 'the next stream, once the drained one freed the slot');
    expect((await next).body).toBe('ok');
  });
});

/** `/<n>` is answered with n bytes; `/fail` is reset by its handler with INTERNAL_ERROR. */
const sized: Handler = (req, res) => {
  if (req.url === '/fail') req.stream.close(h2.NGHTTP2_INTERNAL_ERROR);
  else res.end(Buffer.alloc(Number(req.url!.slice(1)), 0x61));
};

describe('guardSession: streams the server ends itself are not the client’s resets (rule H2-rapid-reset)', () => {
  it('streams its handlers reset with an error code count as completed', async () => {
    const streams = HTTP2_RESET_ALLOWANCE + 6;
    const { origin, sessions, closedOnServer } = await guarded({}, sized, { maxConcurrentStreams: 2 * streams });
    const s = await client(origin);
    const ended = Array.from({ length: streams }, () => {
      const stream = s.request({ ':method': 'POST', ':path': '/fail' });
      stream.write('a body not finished yet');
      return outcome(stream);
    });
    await settled(Promise.all(ended), 'every stream its handler reset');
    for (const e of await Promise.all(ended)) expect(e.rstCode).toBe(h2.NGHTTP2_INTERNAL_ERROR);
    await closedOnServer(streams);
    expect(sessions[0]!.destroyed).toBe(false);
  });

  it('streams refused with REFUSED_STREAM over the soft write bound (rule H2-write-budget) count as completed', async () => {
    const streams = HTTP2_RESET_ALLOWANCE + 6;
    const { origin, sessions, closedOnServer } = await guarded({ queuedSoftBytes: 0 }, sized, { maxConcurrentStreams: 2 * streams });
    // A zero flow-control window: the first answer stays queued, so the session is over the soft bound.
    const s = await client(origin, { initialWindowSize: 0 });
    const held = s.request({ ':method': 'GET', ':path': '/10' });
    held.on('error', () => undefined);
    await once(held, 'response');
    const opened = await untilRefused(s);
    const ended = Array.from({ length: streams }, () => outcome(s.request({ ':method': 'GET', ':path': '/0' })));
    for (const e of await Promise.all(ended)) expect(e.rstCode).toBe(h2.NGHTTP2_REFUSED_STREAM);
    await closedOnServer(streams + 1);
    expect(opened).toBeGreaterThan(0);
    expect(sessions[0]!.destroyed).toBe(false);
  });
});

describe('guardSession: answers the client does not take (rule H2-write-budget)', () => {
  it('an empty answer whose END_STREAM the client does not take counts as waiting: past the write deadline the session goes', async () => {
    const { origin } = await guarded({ streamWriteMs: 50 }, sized);
    const s = await client(origin, { initialWindowSize: 0 });
    const goaway = goawayOf(s);
    const stream = s.request({ ':method': 'GET', ':path': '/0' });
    stream.on('error', () => undefined);
    await settled(goaway, 'the session closed past the write deadline');
    expect(await goaway).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
  });
});

describe('guardSession: the write deadline, on a fake clock (rule H2-write-budget)', () => {
  afterEach(() => void vi.useRealTimers());

  it('an answer that has waited exactly streamWriteMs closes its session at that look, not the one after', async () => {
    // Only the guard's ticker and its clock are fake; the sockets, the deadlines' timers and this test's waits are real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const { origin, sessions } = await guarded({ streamWriteMs: 20 }, sized);
    const s = await client(origin, { initialWindowSize: 0 });
    const stream = s.request({ ':method': 'GET', ':path': '/10' });
    stream.on('error', () => undefined);
    await once(stream, 'response');
    vi.advanceTimersByTime(10); // the first look sees the 10 bytes the client has not taken: they wait from now
    vi.advanceTimersByTime(10); // waiting 10 ms
    expect(sessions[0]!.destroyed).toBe(false);
    vi.advanceTimersByTime(10); // waiting 20 ms
    expect(sessions[0]!.destroyed).toBe(true);
  });
});

/** Whether a new stream of `s` is answered (its response headers come) or refused with REFUSED_STREAM. */
function answeredOrRefused(s: ClientHttp2Session, path: string): Promise<'answered' | 'refused' | 'other'> {
  const stream = s.request({ ':method': 'GET', ':path': path });
  stream.on('error', () => undefined);
  return new Promise((resolve) => {
    stream.once('response', () => resolve('answered'));
    stream.once('close', () => resolve(stream.rstCode === h2.NGHTTP2_REFUSED_STREAM ? 'refused' : 'other'));
  });
}

/** The server has read every frame `s` sent before this (its PING is answered after them). */
function serverCaughtUp(s: ClientHttp2Session): Promise<void> {
  return new Promise((resolve) => s.ping(() => resolve()));
}

describe('guardSession: the idle deadline of a session with no stream, on fake timers (rule H2-idle)', () => {
  afterEach(() => void vi.useRealTimers());

  it('a session that opens no stream is closed with GOAWAY NO_ERROR once idleMs has passed, not before', async () => {
    // The guard's timers are fake; the sockets are real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { origin, sessions } = await guarded({ idleMs: 100 }, parkOrEcho);
    const s = await client(origin);
    const goaway = goawayOf(s);
    vi.advanceTimersByTime(99);
    expect(sessions[0]!.closed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(sessions[0]!.closed).toBe(true);
    expect(await goaway).toBe(h2.NGHTTP2_NO_ERROR);
  });

  it('open streams hold the session past idleMs; idleMs after its last stream has closed, it is closed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { origin, sessions, closedOnServer } = await guarded({ idleMs: 100 }, parkOrEcho);
    const s = await client(origin);
    const goaway = goawayOf(s);
    const open = async (): Promise<ClientHttp2Stream> => {
      const stream = s.request({ ':method': 'GET', ':path': '/park' });
      stream.on('error', () => undefined);
      await once(stream, 'response');
      return stream;
    };
    const [first, second] = [await open(), await open()];
    vi.advanceTimersByTime(500);
    expect(sessions[0]!.closed).toBe(false);
    // One of two streams closes: the other still holds the session.
    first.close(h2.NGHTTP2_CANCEL);
    await closedOnServer(1);
    vi.advanceTimersByTime(500);
    expect(sessions[0]!.closed).toBe(false);
    // The last one closes: the idle deadline runs again from here.
    second.close(h2.NGHTTP2_CANCEL);
    await closedOnServer(2);
    vi.advanceTimersByTime(99);
    expect(sessions[0]!.closed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(sessions[0]!.closed).toBe(true);
    expect(await goaway).toBe(h2.NGHTTP2_NO_ERROR);
  });

  it('once its sessions have closed the guard leaves no timer to hold the process', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { origin, sessions, closedOnServer } = await guarded({}, parkOrEcho);
    const [a, b] = [await client(origin), await client(origin)];
    // A stream answered and closed (its request deadline goes with it), on one of the two sessions.
    expect((await outcome(a.request({ ':method': 'GET', ':path': '/echo' }))).body).toBe('ok');
    await closedOnServer(1);
    const closed = sessions.map((session) => once(session, 'close'));
    a.close();
    b.close();
    await Promise.all(closed);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('guardSession: one ticker for every session (rules H2-write-budget, H2-header-refusals)', () => {
  it('two sessions share one ticker, which never holds the process and stops once the last of them has closed', async () => {
    // Spies on the real timers, never on fake ones: vitest restores every spy once more after the file
    // has ended, to the function it wrapped, and a fake setInterval put back then would never fire again
    // for any later file of this worker (isolate: false).
    const intervals = vi.spyOn(globalThis, 'setInterval');
    const clears = vi.spyOn(globalThis, 'clearInterval');
    try {
      const { origin, sessions } = await guarded({}, parkOrEcho);
      const [a, b] = [await client(origin), await client(origin)];
      expect(intervals).toHaveBeenCalledTimes(1);
      const ticker = intervals.mock.results[0]!.value as NodeJS.Timeout;
      expect(ticker.hasRef()).toBe(false);
      a.close();
      await once(sessions[0]!, 'close');
      expect(clears).not.toHaveBeenCalled();
      b.close();
      await once(sessions[1]!, 'close');
      expect(clears).toHaveBeenCalledExactlyOnceWith(ticker);
    } finally {
      intervals.mockRestore();
      clears.mockRestore();
    }
  });
});

describe('dispatchGuarded: at most activeStreams handlers of a session at once (rule H2-write-budget)', () => {
  /** The paths whose handler ran, in order; `/park` is held open, anything else answered `ok`. */
  const recording = (started: string[]): Handler => {
    return (req, res) => {
      started.push(req.url!);
      parkOrEcho(req, res);
    };
  };
  /** Resolves once the server has dispatched (run or queued) `n` more streams of `session`. */
  const dispatched = (session: ServerHttp2Session, n: number): Promise<void> =>
    new Promise((resolve) => {
      let seen = 0;
      // Attached last: the request handler (and so dispatchGuarded) has run for the stream.
      const onStream = (): void => {
        if (++seen < n) return;
        session.off('stream', onStream);
        setImmediate(resolve);
      };
      session.on('stream', onStream);
    });

  it('a stream past the limit waits until an active one closes, then runs', async () => {
    const started: string[] = [];
    const { origin, sessions } = await guarded({ activeStreams: 1 }, recording(started));
    const s = await client(origin);
    const parked = s.request({ ':method': 'GET', ':path': '/park' });
    parked.on('error', () => undefined);
    await once(parked, 'response');
    const queued = dispatched(sessions[0]!, 1);
    const waiting = outcome(s.request({ ':method': 'GET', ':path': '/echo' }));
    await queued;
    expect(started).toEqual(['/park']);
    parked.close(h2.NGHTTP2_CANCEL);
    expect((await waiting).body).toBe('ok');
    expect(started).toEqual(['/park', '/echo']);
  });

  it('a waiting stream its client resets is skipped, closed but not yet destroyed: its handler never runs, the next one gets the slot', async () => {
    const started: string[] = [];
    const { origin, sessions } = await guarded({ activeStreams: 1 }, recording(started));
    const s = await client(origin);
    const onServer = new Map<string, ServerHttp2Stream>();
    sessions[0]!.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void onServer.set(headers[':path']!, stream));
    const parked = s.request({ ':method': 'GET', ':path': '/park' });
    parked.on('error', () => undefined);
    await once(parked, 'response');
    const queued = dispatched(sessions[0]!, 2);
    const skipped = s.request({ ':method': 'POST', ':path': '/skipped' });
    skipped.on('error', () => undefined);
    // More body than the stream's window: its end cannot reach the server before the reset does.
    skipped.write(Buffer.alloc(256 * 1024, 0x61));
    const next = outcome(s.request({ ':method': 'GET', ':path': '/echo' }));
    await queued;
    // The active stream ends in the very turn the waiting one is reset with NO_ERROR: its slot frees while
    // the reset stream is closed but not yet destroyed (Node destroys it once its request is drained).
    onServer.get('/skipped')!.once('aborted', () => onServer.get('/park')!.destroy());
    skipped.close(h2.NGHTTP2_NO_ERROR);
    await settled(next, 'the next stream, given the slot the skipped one left');
    expect((await next).body).toBe('ok');
    expect(started).toEqual(['/park', '/echo']);
  });
});

/** `/w<n>`: n bytes written, the answer held open (its response kept in `held`); `/e<n>`: n bytes and the end. */
function budget(held: Http2ServerResponse[]): Handler {
  return (req, res) => {
    const bytes = Buffer.alloc(Number(req.url!.slice(2)), 0x61);
    if (req.url!.startsWith('/e')) return void res.end(bytes);
    held.push(res);
    res.writeHead(200);
    res.write(bytes);
  };
}

/** Opens a stream and resolves once its response headers came: its answer was written (or started) by then. */
async function answered(s: ClientHttp2Session, path: string): Promise<ClientHttp2Stream> {
  const stream = s.request({ ':method': 'GET', ':path': path });
  stream.on('error', () => undefined);
  await once(stream, 'response');
  return stream;
}

describe('guardSession: the write budget, on a fake clock (rule H2-write-budget)', () => {
  afterEach(() => void vi.useRealTimers());
  // Only the guard's ticker (a look every 10 ms) and its clock are fake; the sockets are real.
  const fakeTicker = (): void => void vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });

  it('answers queued past queuedHardBytes close the session with GOAWAY ENHANCE_YOUR_CALM; exactly the bound is kept', async () => {
    fakeTicker();
    const { origin, sessions } = await guarded({ queuedHardBytes: 10 }, budget([]));
    const s = await client(origin, { initialWindowSize: 0 });
    const goaway = goawayOf(s);
    await answered(s, '/w10');
    vi.advanceTimersByTime(10);
    expect(sessions[0]!.destroyed).toBe(false);
    await answered(s, '/w1');
    vi.advanceTimersByTime(10);
    expect(sessions[0]!.destroyed).toBe(true);
    expect(await goaway).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
  });

  it('sessions still open are looked at after another has closed: past queuedHardBytes one is closed', async () => {
    fakeTicker();
    const { origin, sessions } = await guarded({ queuedHardBytes: 10 }, budget([]));
    const gone = await client(origin);
    const s = await client(origin, { initialWindowSize: 0 });
    const closed = once(sessions[0]!, 'close');
    gone.close();
    await closed;
    await answered(s, '/w11');
    vi.advanceTimersByTime(10);
    expect(sessions[1]!.destroyed).toBe(true);
  });

  it('new streams are refused while more than queuedSoftBytes wait, an ended answer’s END_STREAM counting one byte; at the bound they are not', async () => {
    fakeTicker();
    const { origin } = await guarded({ queuedSoftBytes: 10 }, budget([]));
    const s = await client(origin, { initialWindowSize: 0 });
    await answered(s, '/w10');
    vi.advanceTimersByTime(10);
    expect(await answeredOrRefused(s, '/w0')).toBe('answered');
    // An empty answer, ended: nothing but its END_STREAM waits.
    await answered(s, '/e0');
    vi.advanceTimersByTime(10);
    expect(await answeredOrRefused(s, '/w0')).toBe('refused');
  });

  it('an answer its client has taken counts for nothing: neither against the soft bound nor as waiting past the write deadline', async () => {
    fakeTicker();
    const { origin, sessions } = await guarded({ queuedSoftBytes: 0, streamWriteMs: 20 }, budget([]));
    const s = await client(origin);
    const stream = s.request({ ':method': 'GET', ':path': '/w10' });
    stream.on('error', () => undefined);
    await once(stream, 'data');
    for (let look = 0; look < 5; look++) vi.advanceTimersByTime(10);
    expect(sessions[0]!.destroyed).toBe(false);
    expect(await answeredOrRefused(s, '/w0')).toBe('answered');
  });

  it('an answer taken in time that queues again waits afresh: its session is closed streamWriteMs after it queued again', async () => {
    fakeTicker();
    const held: Http2ServerResponse[] = [];
    const { origin, sessions } = await guarded({ streamWriteMs: 20 }, budget(held));
    const s = await client(origin, { initialWindowSize: 0 });
    const stream = await answered(s, '/w10');
    vi.advanceTimersByTime(10); // the 10 bytes wait from here
    // The client opens its window and takes them within the deadline...
    const taken = once(stream, 'data');
    s.settings({ initialWindowSize: 65_535 });
    await taken;
    vi.advanceTimersByTime(10); // nothing waits
    // ...then shuts it again: the next bytes wait from the look that first sees them.
    await new Promise<void>((resolve) => s.settings({ initialWindowSize: 0 }, () => resolve()));
    held[0]!.write(Buffer.alloc(10, 0x61));
    vi.advanceTimersByTime(10);
    expect(sessions[0]!.destroyed).toBe(false);
    vi.advanceTimersByTime(10);
    expect(sessions[0]!.destroyed).toBe(false);
    vi.advanceTimersByTime(10);
    expect(sessions[0]!.destroyed).toBe(true);
  });

  it('a session whose waiting answers are all gone is no longer over the soft bound: its next stream is served', async () => {
    fakeTicker();
    const { origin, closedOnServer } = await guarded({ queuedSoftBytes: 0 }, budget([]));
    const s = await client(origin, { initialWindowSize: 0 });
    const waiting = await answered(s, '/w10');
    vi.advanceTimersByTime(10);
    expect(await answeredOrRefused(s, '/w0')).toBe('refused');
    waiting.close(h2.NGHTTP2_CANCEL);
    await closedOnServer(2);
    vi.advanceTimersByTime(10);
    expect(await answeredOrRefused(s, '/w0')).toBe('answered');
  });
});

describe('guardSession: header blocks Node refuses, on a fake clock (rule H2-header-refusals)', () => {
  afterEach(() => void vi.useRealTimers());

  it('one refused header block is tolerated on a session and it is served on; the second gets GOAWAY ENHANCE_YOUR_CALM', async () => {
    // Only the guard's ticker and its clock are fake; the sockets are real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const { origin, sessions } = await guarded({}, parkOrEcho, { maxHeaderListSize: 1024 });
    const s = await client(origin);
    const goaway = goawayOf(s);
    const refused = async (): Promise<void> => {
      const ended = outcome(s.request({ ':method': 'GET', ':path': '/echo', 'x-big': 'a'.repeat(2048) }));
      expect((await ended).status).toBeUndefined();
      await serverCaughtUp(s);
    };
    await refused();
    vi.advanceTimersByTime(10);
    expect(sessions[0]!.destroyed).toBe(false);
    expect((await outcome(s.request({ ':method': 'GET', ':path': '/echo' }))).body).toBe('ok');
    vi.advanceTimersByTime(10);
    expect(sessions[0]!.destroyed).toBe(false);
    await refused();
    vi.advanceTimersByTime(10);
    expect(sessions[0]!.destroyed).toBe(true);
    expect(await goaway).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
  });
});

/** A client that writes HTTP/2 frames itself, for what node:http2 never sends: header blocks with the preface. */
interface RawClient {
  readonly socket: Socket;
  /** Resolves with the error code of the first GOAWAY received. */
  readonly goaway: Promise<number>;
  /** Resolves with the first frame received. */
  readonly first: Promise<void>;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const [SETTINGS, HEADERS, GOAWAY] = [0x4, 0x1, 0x7];
const [END_STREAM, END_HEADERS, ACK] = [0x1, 0x4, 0x1];

function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK with the static table only: GET `path` on http://localhost, then `extra` fields `x: a` (each one literal, not indexed). */
function getBlock(path: string, extra = 0): Buffer {
  const literal = (index: number, value: string): Buffer => Buffer.from([index, value.length, ...Buffer.from(value, 'latin1')]);
  const x = Buffer.from([0x00, 1, 0x78, 1, 0x61]);
  return Buffer.concat([Buffer.from([0x82, 0x86]), literal(0x04, path), literal(0x01, 'localhost'), ...Array<Buffer>(extra).fill(x)]);
}

/** Connects, sends the preface, our SETTINGS (an initial window of 0 if asked) and `first`, all in one write. */
function rawClient(port: number, options: { initialWindowSize?: number; first?: Buffer } = {}): RawClient {
  const socket = tcpConnect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socketsToDestroy.push(socket);
  const settings = options.initialWindowSize === undefined ? Buffer.alloc(0) : Buffer.from([0, 0x4, 0, 0, 0, options.initialWindowSize]);
  socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0, settings), options.first ?? Buffer.alloc(0)]));
  let received = Buffer.alloc(0);
  let sawFirst: () => void = () => undefined;
  let sawGoaway: (code: number) => void = () => undefined;
  const first = new Promise<void>((resolve) => (sawFirst = resolve));
  const goaway = new Promise<number>((resolve) => (sawGoaway = resolve));
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    while (received.length >= 9 && received.length >= 9 + received.readUIntBE(0, 3)) {
      const length = received.readUIntBE(0, 3);
      const [type, flags] = [received.readUInt8(3), received.readUInt8(4)];
      if (type === SETTINGS && (flags & ACK) === 0) socket.write(frame(SETTINGS, ACK, 0));
      if (type === GOAWAY) sawGoaway(received.readUInt32BE(9 + 4));
      sawFirst();
      received = received.subarray(9 + length);
    }
  });
  return { socket, goaway, first };
}

const socketsToDestroy: Socket[] = [];
afterEach(() => {
  for (const socket of socketsToDestroy.splice(0)) socket.destroy();
});

describe('guardSession: header blocks sent with the preface (rule H2-header-refusals)', () => {
  afterEach(() => void vi.useRealTimers());

  it('header blocks Node refused in the write that brought the preface are seen at once, before any tick of the guard (one-port server)', async () => {
    // The guard's ticker is fake and never ticks: only its first look, as the session starts, can see them.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const onePort = createOnePortServer({ grpc: (_req, res) => res.end(), rest: (_req, res) => res.end() });
    onePort.server.listen(0, '127.0.0.1');
    await once(onePort.server, 'listening');
    try {
      // Two header blocks of more fields than Node takes (maxHeaderListPairs, 128): both refused.
      const tooMany = (id: number): Buffer => frame(HEADERS, END_STREAM | END_HEADERS, id, getBlock('/', 200));
      const c = rawClient((onePort.server.address() as AddressInfo).port, { first: Buffer.concat([tooMany(1), tooMany(3)]) });
      await settled(c.goaway, 'the GOAWAY of the first look');
      expect(await c.goaway).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
      c.socket.destroy();
    } finally {
      await onePort.shutdown();
    }
  });
});
