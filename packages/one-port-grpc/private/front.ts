/**
 * The one-port front: HTTP/1.1 and cleartext HTTP/2 (h2c, hence gRPC) on one port, routed per request, not
 * per connection (rules ONEPORT-h1-h2c, ONEPORT-dispatch). Node's cleartext http2 server does not take
 * HTTP/1.1 (allowHTTP1 works only behind TLS), so a plain TCP server reads each connection's first bytes
 * and hands the socket to an http2 server on the HTTP/2 preface, to an http server otherwise; behind TLS,
 * ALPN says which (rule ONEPORT-tls). A stop sends GOAWAY to HTTP/2 sessions, drains HTTP/1.1 connections
 * and cuts what is left after the grace.
 */
import { createServer as createHttp1Server, type IncomingMessage, type Server as Http1Server, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2Server, type ServerHttp2Session } from 'node:http2';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { dispatchGuarded, guardSession, HTTP2_SERVER_OPTIONS, type Http2Limits } from './http2-limits.ts';

export type AnyRequest = IncomingMessage | Http2ServerRequest;
export type AnyResponse = ServerResponse | Http2ServerResponse;
/** A request handler usable by both node:http and node:http2's compatibility API. */
export type AnyRequestHandler = (req: AnyRequest, res: AnyResponse) => void;

/** What every prior-knowledge HTTP/2 connection starts with (RFC 9113 section 3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** A connection that has not shown which protocol it speaks by then is dropped (a header timeout's 10 s). */
export const SNIFF_TIMEOUT_MS = 10_000;

/** In-flight requests get this long after a stop before their connections are cut. */
export const STOP_GRACE_MS = 5_000;

/** During a stop, a connection still being sniffed and silent this long is dropped, as an idle keep-alive one is. */
export const STOP_QUIET_MS = 500;

/** How often a stop looks for sniffed connections that stayed silent too long. */
const SILENT_SWEEP_MS = 50;

/** Rule ONEPORT-dispatch, literally: HTTP major version 2 AND a Content-Type beginning with `application/grpc`. */
export function isGrpcRequest(httpVersionMajor: number, contentType: string | undefined): boolean {
  return httpVersionMajor === 2 && contentType !== undefined && contentType.startsWith('application/grpc');
}

/** The HTTP/1.1 side: a node:http server the front feeds connections to (it never listens itself). */
export interface Http1Side {
  /** Built around the REST handler: an HTTP/1.1 request is never gRPC (rule ONEPORT-dispatch). */
  readonly server: Http1Server;
  /** A graceful stop of its connections within `graceMs`; resolves when none is left. Default: close the idle ones. */
  readonly drain?: (graceMs: number) => Promise<void>;
}

export interface OnePortOptions {
  /** Only ever called for HTTP/2 requests with a gRPC Content-Type (createUnaryServer's handler). */
  readonly grpc: (req: Http2ServerRequest, res: Http2ServerResponse) => void;
  /** Every other request: the REST app with its HTTP middleware (the dispatcher is not wrapped, rule ONEPORT-mw-rest-only). */
  readonly rest: AnyRequestHandler;
  /** The HTTP/1.1 server and its drain; default: node:http's own server around `rest`. */
  readonly http1?: Http1Side;
  /** PEM certificate and key: the port speaks TLS only, ALPN h2 and http/1.1 (rule ONEPORT-tls). */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Defaults: SNIFF_TIMEOUT_MS, STOP_GRACE_MS, STOP_QUIET_MS, and http2-limits.ts's constants. */
  readonly sniffTimeoutMs?: number;
  readonly graceMs?: number;
  readonly quietMs?: number;
  readonly http2Limits?: Http2Limits;
}

export interface OnePortServer {
  /** The listening socket: the caller binds and watches this one. */
  readonly server: Server;
  /** Stop accepting, GOAWAY to HTTP/2 sessions, drain HTTP/1.1 connections, cut what is left after the grace. */
  readonly shutdown: () => Promise<void>;
}

export function createOnePortServer(options: OnePortOptions): OnePortServer {
  const port = new OnePort(options);
  return { server: port.front, shutdown: () => port.shutdown() };
}

/** The HTTP/2 preface in full is h2c; a prefix of it needs more bytes; anything else is HTTP/1.1. */
export function sniffProtocol(received: Buffer): 'http2' | 'http1' | 'undecided' {
  const seen = Math.min(received.length, HTTP2_PREFACE.length);
  if (!received.subarray(0, seen).equals(HTTP2_PREFACE.subarray(0, seen))) return 'http1';
  return received.length < HTTP2_PREFACE.length ? 'undecided' : 'http2';
}

/** The front (a TCP or TLS server), the two protocol servers behind it, and every connection they hold. */
class OnePort {
  readonly front: Server;
  private readonly http1: Http1Server;
  private readonly drainHttp1: (graceMs: number) => Promise<void>;
  private readonly http2: Http2Server;
  private readonly sniffTimeoutMs: number;
  private readonly graceMs: number;
  private readonly quietMs: number;
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly sockets = new Set<Socket>();
  /** Sockets not handed over yet, with when they were accepted or last sent a byte. */
  private readonly sniffing = new Map<Socket, number>();
  private stopping = false;

  constructor(options: OnePortOptions) {
    this.sniffTimeoutMs = options.sniffTimeoutMs ?? SNIFF_TIMEOUT_MS;
    this.graceMs = options.graceMs ?? STOP_GRACE_MS;
    this.quietMs = options.quietMs ?? STOP_QUIET_MS;
    const http1 = options.http1 ?? { server: createHttp1Server(options.rest) };
    this.http1 = http1.server;
    this.drainHttp1 = http1.drain ?? (async () => http1.server.closeIdleConnections());
    // Only 'listening' starts an http server's connection tracking: without it its timeouts and
    // closeIdleConnections() do nothing, and this one never listens itself.
    this.http1.emit('listening');
    this.http2 = createHttp2Server(HTTP2_SERVER_OPTIONS, (req, res) => {
      // On the next turn, after the rest of the bytes read with this HEADERS frame: a stream its client already
      // reset costs no handler work (rule H2-rapid-reset); at most activeStreams at once (rule H2-write-budget).
      setImmediate(() =>
        dispatchGuarded(req.stream, () => {
          if (isGrpcRequest(req.httpVersionMajor, req.headers['content-type'])) options.grpc(req, res);
          else options.rest(req, res);
        }),
      );
    });
    this.http2.on('session', (session) => {
      // A connection accepted just before the stop still gets a session, told at once to go away.
      if (this.stopping) queueMicrotask(() => session.close());
      this.sessions.add(session);
      session.once('close', () => this.sessions.delete(session));
      guardSession(session, options.http2Limits);
    });
    this.front = options.tls !== undefined ? this.tlsFront(options.tls) : this.cleartextFront();
  }

  async shutdown(): Promise<void> {
    // The front counts every socket it accepted, handed over or not: its close callback means all are gone.
    const closed = new Promise<void>((resolve) => this.front.close(() => resolve()));
    // A connection still being sniffed may be sending a request: handed over as usual unless silent for quietMs.
    this.stopping = true;
    const sweep = setInterval(() => this.dropSilentSniffs(), SILENT_SWEEP_MS);
    for (const session of this.sessions) session.close();
    const cut = setTimeout(() => {
      for (const session of this.sessions) session.destroy();
      for (const socket of this.sockets) socket.destroy();
    }, this.graceMs);
    try {
      await Promise.all([closed, this.drainHttp1(this.graceMs)]);
    } finally {
      clearInterval(sweep);
      clearTimeout(cut);
      // Stops the http server's timeout checks. (The http2 server never listened; its sessions went with their sockets.)
      this.http1.close();
    }
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private tlsFront(tls: NonNullable<OnePortOptions['tls']>): Server {
    const alpn = { cert: tls.cert, key: tls.key, ALPNProtocols: ['h2', 'http/1.1'], handshakeTimeout: this.sniffTimeoutMs, noDelay: true };
    const server = createTlsServer(alpn, (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'h2') this.http2.emit('connection', socket);
      else this.http1.emit('connection', socket);
    });
    server.on('connection', (socket: Socket) => this.track(socket));
    return server;
  }

  private cleartextFront(): Server {
    // The http server would disable Nagle on sockets it accepts itself; here the front accepts them.
    return createNetServer({ noDelay: true }, (socket) => {
      this.track(socket);
      this.sniffing.set(socket, Date.now());
      this.sniff(socket);
    });
  }

  /** Reads a connection's first bytes until sniffProtocol decides, then hands it, bytes put back, to that server. */
  private sniff(socket: Socket): void {
    let received: Buffer = Buffer.alloc(0);
    // A socket emits 'error' only as it is destroyed: this keeps the error from being thrown; 'close' follows.
    const onError = (): void => undefined;
    const timer = setTimeout(() => socket.destroy(), this.sniffTimeoutMs);
    const release = (): void => {
      clearTimeout(timer);
      this.sniffing.delete(socket);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', release);
    };
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      this.sniffing.set(socket, Date.now());
      const protocol = sniffProtocol(received);
      if (protocol === 'undecided') return;
      release();
      // Paused, so the bytes put back reach the new owner's listener before any new read.
      socket.pause();
      socket.unshift(received);
      // The http2 session reads the buffered bytes itself on its next tick.
      if (protocol === 'http2') return void this.http2.emit('connection', socket);
      // The http server attaches a 'data' listener in this tick; the resume emits the bytes to it on the next.
      this.http1.emit('connection', socket);
      socket.resume();
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', release);
  }

  /** During a stop: a connection still sniffed and silent for quietMs is dropped. */
  private dropSilentSniffs(): void {
    // After the poll phase: bytes that arrived while this process was stalled have been read, so a stall never
    // passes for a quiet client.
    setImmediate(() => {
      const now = Date.now();
      for (const [socket, since] of this.sniffing) if (now - since >= this.quietMs) socket.destroy();
    });
  }
}
