/**
 * The one-port front of orders-grpc (spec 4.4 rule 2): HTTP/1.1 and cleartext HTTP/2 (h2c, hence gRPC)
 * on one port, routed per request, not per connection (rule 1: HTTP/2 and `application/grpc` is gRPC,
 * everything else is REST).
 *
 * Node's cleartext http2 server does not take HTTP/1.1 (allowHTTP1 works only behind TLS), so a plain TCP
 * server reads the first bytes of each connection and hands the socket to an http2 server when they are
 * the HTTP/2 preface, otherwise to an http server; behind TLS, ALPN says which. Both servers call the same
 * per-request dispatcher. Why the gRPC side is a hand-written server rather than grpc-js or Connect, and
 * what it supports: unary-server/unary-server.ts.
 *
 * Supports: prior-knowledge h2c and HTTP/1.1 on one cleartext port, or h2 and http/1.1 by ALPN on one TLS
 * port (rule ONEPORT-tls); the hardened node:http server every executable uses; Node's own http2 limits
 * plus the session guard of http2-limits.ts; a graceful stop (GOAWAY, drain, cut after the grace). Not
 * supported: the HTTP/1.1 `Upgrade: h2c` dance (no gRPC client uses it).
 */
import type { IncomingMessage, Server as Http1Server, ServerResponse } from 'node:http';
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Server,
  type ServerHttp2Session,
} from 'node:http2';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { afterPendingIo, drainHttp1, SHUTDOWN_GRACE_MS, SHUTDOWN_IDLE_QUIET_MS, trackConnections } from '../http/server/shutdown.ts';
import { dispatchGuarded, guardSession, HTTP2_SERVER_OPTIONS, type SessionGuardOptions } from './http2-limits.ts';
import { createHttp1Server, type Http1Settings } from '../http/server/http1.ts';
import { HEADERS_TIMEOUT_MS } from '../http/server/timeouts.ts';

export type AnyRequest = IncomingMessage | Http2ServerRequest;
export type AnyResponse = ServerResponse | Http2ServerResponse;
/** A request handler usable by both node:http and node:http2's compatibility API. */
export type AnyRequestHandler = (req: AnyRequest, res: AnyResponse) => void;

/** What every prior-knowledge HTTP/2 connection starts with (RFC 9113 section 3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** Our choice: a connection that has not shown which protocol it speaks by then is dropped. */
export const SNIFF_TIMEOUT_MS = HEADERS_TIMEOUT_MS;

/** How often a stop looks for sniffed connections that stayed silent too long. */
const SILENT_SWEEP_MS = 50;

/**
 * Spec 4.4 rule 1, literally: HTTP major version 2 AND a Content-Type beginning with
 * `application/grpc` (case-sensitive, as the rule is written). Everything else is REST.
 */
export function isGrpcRequest(httpVersionMajor: number, contentType: string | undefined): boolean {
  return httpVersionMajor === 2 && contentType !== undefined && contentType.startsWith('application/grpc');
}

export interface OnePortOptions {
  /** Only ever called for HTTP/2 requests (rule 1). */
  readonly grpc: (req: Http2ServerRequest, res: Http2ServerResponse) => void;
  /** The REST app with all its HTTP middleware (spec 4.4 rule 3: the dispatcher itself is not wrapped). */
  readonly rest: AnyRequestHandler;
  readonly graceMs?: number;
  readonly sniffTimeoutMs?: number;
  /** PEM certificate and key: the port speaks TLS only, ALPN h2 and http/1.1 (rule ONEPORT-tls). */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Tests only: shorter HTTP/2 deadlines (http2-limits.ts has the real ones). */
  readonly http2Guard?: SessionGuardOptions;
  /** The HTTP/1.1 side's settings from composition: tests' shorter timeouts, the response class. */
  readonly http1?: Http1Settings;
}

export interface OnePortServer {
  /** The listening socket: the lifecycle's Listener binds and watches this one. */
  readonly server: Server;
  /** Stop accepting, GOAWAY to HTTP/2 sessions, drain HTTP/1.1 connections (drainHttp1), cut after the grace. */
  readonly shutdown: () => Promise<void>;
}

/** HTTP/1.1 and cleartext HTTP/2 on one port (spec 4.4 rule 2): the front, and how to stop it. */
export function createOnePortServer(options: OnePortOptions): OnePortServer {
  const port = new OnePort(options);
  return { server: port.front, shutdown: () => port.shutdown() };
}

/** The per-request dispatcher both servers call (rule 1); it is not wrapped by any middleware (rule 3). */
function dispatchByProtocol(options: Pick<OnePortOptions, 'grpc' | 'rest'>): AnyRequestHandler {
  return (req, res) => {
    if (isGrpcRequest(req.httpVersionMajor, req.headers['content-type']))
      options.grpc(req as Http2ServerRequest, res as Http2ServerResponse);
    else options.rest(req, res);
  };
}

/**
 * The same hardened node:http server as the other executables (timeouts enforced as declared, JSON
 * answers to parser errors, CONNECT, Expect): http/server/http1.ts. Fed sockets by the front.
 */
function sharedHttp1Server(dispatch: AnyRequestHandler, settings: Http1Settings | undefined): Http1Server {
  const http1 = createHttp1Server(dispatch, settings);
  // An http server fed through emit('connection') never listens itself, and only 'listening' starts its
  // connection tracking: without it the timeouts above and closeIdleConnections() do nothing.
  http1.emit('listening');
  trackConnections(http1);
  return http1;
}

/** An http2 server fed sockets by the front, with Node's own limits (HTTP2_SERVER_OPTIONS). */
function guardedHttp2Server(dispatch: AnyRequestHandler): Http2Server {
  return createHttp2Server(HTTP2_SERVER_OPTIONS, (req, res) => {
    // Started on the next turn of the loop, after the rest of the bytes read with this HEADERS frame:
    // a stream its client already reset (rapid reset, rule H2-rapid-reset) costs no handler work. At
    // most HTTP2_ACTIVE_STREAMS of a session at once (rule H2-write-budget).
    setImmediate(() => dispatchGuarded(req.stream, () => dispatch(req, res)));
  });
}

/** What the first bytes of a cleartext connection say so far. */
type Sniffed = 'http2' | 'http1' | 'undecided';

/** The HTTP/2 preface in full is h2c; a prefix of it needs more bytes; anything else is HTTP/1.1. */
export function sniffProtocol(received: Buffer): Sniffed {
  const seen = Math.min(received.length, HTTP2_PREFACE.length);
  const isPreface = received.subarray(0, seen).equals(HTTP2_PREFACE.subarray(0, seen));
  if (!isPreface) return 'http1';
  return received.length < HTTP2_PREFACE.length ? 'undecided' : 'http2';
}

/** The front (a TCP or TLS server), the two protocol servers behind it, and every connection they hold. */
class OnePort {
  readonly front: Server;
  private readonly http1: Http1Server;
  private readonly http2: Http2Server;
  private readonly graceMs: number;
  private readonly sniffTimeoutMs: number;
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly sockets = new Set<Socket>();
  /** Sockets not handed over yet, with when they were accepted or last sent a byte. */
  private readonly sniffing = new Map<Socket, number>();
  private stopping = false;

  constructor(options: OnePortOptions) {
    this.graceMs = options.graceMs ?? SHUTDOWN_GRACE_MS;
    this.sniffTimeoutMs = options.sniffTimeoutMs ?? SNIFF_TIMEOUT_MS;
    const dispatch = dispatchByProtocol(options);
    this.http1 = sharedHttp1Server(dispatch, options.http1);
    this.http2 = guardedHttp2Server(dispatch);
    this.http2.on('session', (session) => this.adoptSession(session, options.http2Guard));
    this.front = options.tls !== undefined ? this.tlsFront(options.tls) : this.cleartextFront();
  }

  async shutdown(): Promise<void> {
    // The front counts every socket it accepted, handed over or not: its close callback means all are gone.
    const closed = new Promise<void>((resolve) => this.front.close(() => resolve()));
    // A connection still being sniffed was accepted before the stop and may be sending a request: it is
    // handed over as usual (HTTP/1.1 answered with `Connection: close`, HTTP/2 sent a GOAWAY), unless it
    // stays silent as long as an idle keep-alive connection may (drainHttp1).
    this.stopping = true;
    const sweep = setInterval(() => this.dropSilentSniffs(), SILENT_SWEEP_MS);
    for (const session of this.sessions) session.close();
    const cut = setTimeout(() => this.cutEverything(), this.graceMs);
    try {
      // HTTP/1.1 connections end with a `Connection: close` response or after a quiet spell, never mid-request.
      await Promise.all([closed, drainHttp1(this.http1, this.graceMs)]);
    } finally {
      clearInterval(sweep);
      clearTimeout(cut);
      // Stops the http server's timeout checks; it has no connection left to close. (The http2 server needs
      // no close: it never listened, and every session it had went with its socket.)
      this.http1.close();
    }
  }

  /** Every HTTP/2 session is counted for the stop and guarded (http2-limits.ts). */
  private adoptSession(session: ServerHttp2Session, guard: SessionGuardOptions | undefined): void {
    // A connection accepted just before the stop still gets a session, told at once to go away.
    if (this.stopping) queueMicrotask(() => session.close());
    this.sessions.add(session);
    session.once('close', () => this.sessions.delete(session));
    guardSession(session, guard);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Behind TLS, ALPN says which protocol a connection speaks (spec 4.4 rule 2): the same two servers. */
  private tlsFront(tls: NonNullable<OnePortOptions['tls']>): Server {
    const alpn = { cert: tls.cert, key: tls.key, ALPNProtocols: ['h2', 'http/1.1'], handshakeTimeout: this.sniffTimeoutMs, noDelay: true };
    const server = createTlsServer(alpn, (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'h2') this.http2.emit('connection', socket);
      else this.http1.emit('connection', socket);
    });
    server.on('connection', (socket: Socket) => this.track(socket));
    return server;
  }

  /** In cleartext, the first bytes say which (prefaceSniff). */
  private cleartextFront(): Server {
    // The http server would disable Nagle on sockets it accepts itself; here the front accepts them.
    return createNetServer({ noDelay: true }, (socket) => {
      this.track(socket);
      this.sniffing.set(socket, Date.now());
      prefaceSniff(socket, this.sniffTimeoutMs, this);
    });
  }

  /** A sniffed connection sent bytes: its silence, for the stop's sweep, starts again. */
  heardFrom(socket: Socket): void {
    this.sniffing.set(socket, Date.now());
  }

  /** A sniffed connection was handed over or closed. */
  sniffEnded(socket: Socket): void {
    this.sniffing.delete(socket);
  }

  handToHttp2(socket: Socket, received: Buffer): void {
    // The http2 session drains bytes already buffered with socket.read() on its next tick; a
    // flowing socket would emit them to no listener first, so it must be paused.
    socket.pause();
    socket.unshift(received);
    this.http2.emit('connection', socket);
  }

  handToHttp1(socket: Socket, received: Buffer): void {
    // The http server reads through a 'data' listener it attaches in this same tick, and its parser may
    // read the handle directly from then on: the bytes put back must reach that listener before any new
    // read, or the first request could stall for good. Paused, unshifted, then resumed, they are emitted
    // to the parser on the next tick by the resume itself.
    socket.pause();
    socket.unshift(received);
    this.http1.emit('connection', socket);
    socket.resume();
  }

  /** During a stop: a connection still sniffed and silent as long as an idle keep-alive one may be is dropped. */
  private dropSilentSniffs(): void {
    void afterPendingIo().then(() => {
      const now = Date.now();
      for (const [socket, since] of this.sniffing) if (now - since >= SHUTDOWN_IDLE_QUIET_MS) socket.destroy();
    });
  }

  /** The grace is over: whatever is still open is cut. */
  private cutEverything(): void {
    for (const session of this.sessions) session.destroy();
    for (const socket of this.sockets) socket.destroy();
  }
}

/**
 * Reads a cleartext connection's first bytes until sniffProtocol decides, then hands the socket, with the
 * bytes read so far put back, to the server of its protocol. Silent for `timeoutMs`: dropped.
 */
function prefaceSniff(socket: Socket, timeoutMs: number, port: OnePort): void {
  let received: Buffer = Buffer.alloc(0);
  // A socket emits 'error' only as it is being destroyed (a failed read): this listener just keeps that
  // error from being thrown; the 'close' that follows releases the sniffer.
  const onError = (): void => undefined;
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  const release = (): void => {
    clearTimeout(timer);
    port.sniffEnded(socket);
    socket.off('data', onData);
    socket.off('error', onError);
    socket.off('close', release);
  };
  const onData = (chunk: Buffer): void => {
    received = Buffer.concat([received, chunk]);
    port.heardFrom(socket);
    const protocol = sniffProtocol(received);
    if (protocol === 'undecided') return;
    release();
    if (protocol === 'http2') port.handToHttp2(socket, received);
    else port.handToHttp1(socket, received);
  };
  socket.on('data', onData);
  socket.on('error', onError);
  socket.once('close', release);
}
