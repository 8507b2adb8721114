import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { afterPendingIo, drainHttp1, SHUTDOWN_GRACE_MS, SHUTDOWN_IDLE_QUIET_MS, trackConnections } from '../http/server/http-shutdown.ts';
import { dispatchGuarded, guardSession, HTTP2_SERVER_OPTIONS, type SessionGuardOptions } from './http2-limits.ts';
import { createHttp1Server } from '../http/server/http1-server.ts';
import { HEADERS_TIMEOUT_MS, type ServerTimeouts } from '../http/server/server-timeouts.ts';

export type AnyRequest = IncomingMessage | Http2ServerRequest;
export type AnyResponse = ServerResponse | Http2ServerResponse;
/** A request handler usable by both node:http and node:http2's compatibility API. */
export type AnyRequestHandler = (req: AnyRequest, res: AnyResponse) => void;

/** What every prior-knowledge HTTP/2 connection starts with (RFC 9113 section 3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');


/** Our choice: a connection that has not shown which protocol it speaks by then is dropped. */
export const SNIFF_TIMEOUT_MS = HEADERS_TIMEOUT_MS;

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
  /** Tests only: shorter HTTP/1.1 timeouts (http/server/server-timeouts.ts has the real ones). */
  readonly http1Timeouts?: ServerTimeouts;
}

export interface OnePortServer {
  /** The listening socket: the lifecycle's Listener binds and watches this one. */
  readonly server: Server;
  /** Stop accepting, GOAWAY to HTTP/2 sessions, drain HTTP/1.1 connections (drainHttp1), cut after the grace. */
  readonly shutdown: () => Promise<void>;
}

/**
 * HTTP/1.1 and cleartext HTTP/2 on one port (spec 4.4 rule 2). Node's cleartext http2 server does not
 * take HTTP/1.1 (allowHTTP1 works only behind TLS), so a plain TCP server looks at the first bytes of
 * each connection and hands the socket to an http2 server when they are the HTTP/2 preface, otherwise
 * to an http server. Both call the same per-request dispatcher.
 */
export function createOnePortServer(options: OnePortOptions): OnePortServer {
  const graceMs = options.graceMs ?? SHUTDOWN_GRACE_MS;
  const sniffTimeoutMs = options.sniffTimeoutMs ?? SNIFF_TIMEOUT_MS;
  const dispatch: AnyRequestHandler = (req, res) => {
    if (isGrpcRequest(req.httpVersionMajor, req.headers['content-type'])) options.grpc(req as Http2ServerRequest, res as Http2ServerResponse);
    else options.rest(req, res);
  };

  // The same hardened node:http server as the other executables (timeouts enforced as declared, JSON
  // answers to parser errors, CONNECT, Expect): http/server/http1-server.ts.
  const http1 = createHttp1Server(dispatch, options.http1Timeouts);
  // An http server fed through emit('connection') never listens itself, and only 'listening' starts its
  // connection tracking: without it the timeouts above and closeIdleConnections() do nothing.
  http1.emit('listening');
  trackConnections(http1);

  const http2 = createHttp2Server(HTTP2_SERVER_OPTIONS, (req, res) => {
    // Started on the next turn of the loop, after the rest of the bytes read with this HEADERS frame:
    // a stream its client already reset (rapid reset, rule H2-rapid-reset) costs no handler work. At
    // most HTTP2_ACTIVE_STREAMS of a session at once (rule H2-write-budget).
    setImmediate(() => dispatchGuarded(req.stream, () => dispatch(req, res)));
  });
  const sessions = new Set<ServerHttp2Session>();
  let stopping = false;
  http2.on('session', (session) => {
    // A connection accepted just before the stop still gets a session, told at once to go away.
    if (stopping) queueMicrotask(() => session.close());
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    guardSession(session, options.http2Guard);
  });

  const sockets = new Set<Socket>();
  /** Sockets not handed over yet, with when they were accepted or last sent a byte. */
  const sniffing = new Map<Socket, number>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  // Behind TLS, ALPN says which protocol a connection speaks (spec 4.4 rule 2): the same two servers.
  const secureFront = (tls: NonNullable<OnePortOptions['tls']>): Server => {
    const server = createTlsServer({ cert: tls.cert, key: tls.key, ALPNProtocols: ['h2', 'http/1.1'], handshakeTimeout: sniffTimeoutMs, noDelay: true }, (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'h2') http2.emit('connection', socket);
      else http1.emit('connection', socket);
    });
    server.on('connection', track);
    return server;
  };
  // The http server would disable Nagle on sockets it accepts itself; here the front accepts them.
  const front = options.tls !== undefined ? secureFront(options.tls) : createNetServer({ noDelay: true }, (socket) => {
    track(socket);
    sniffing.set(socket, Date.now());
    let received: Buffer = Buffer.alloc(0);
    const onError = (): void => void socket.destroy();
    const timer = setTimeout(() => socket.destroy(), sniffTimeoutMs);
    const release = (): void => {
      clearTimeout(timer);
      sniffing.delete(socket);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', release);
    };
    const onData = (chunk: Buffer): void => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      sniffing.set(socket, Date.now());
      const seen = Math.min(received.length, HTTP2_PREFACE.length);
      const isPreface = received.subarray(0, seen).equals(HTTP2_PREFACE.subarray(0, seen));
      if (isPreface && received.length < HTTP2_PREFACE.length) return;
      release();
      if (isPreface) {
        // The http2 session drains bytes already buffered with socket.read() on its next tick; a
        // flowing socket would emit them to no listener first, so it must be paused.
        socket.pause();
        socket.unshift(received);
        http2.emit('connection', socket);
      } else {
        // The http server reads through a 'data' listener it attaches in this same tick. Unshifted into a
        // socket that is already flowing, the bytes would sit in its buffer until the next read, and the
        // http parser may read the handle directly from then on: the first request could stall for good.
        // Paused, unshifted, then resumed, they are emitted to the parser on the next tick.
        socket.pause();
        socket.unshift(received);
        http1.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', release);
  });

  const shutdown = async (): Promise<void> => {
    // The front counts every socket it accepted, handed over or not: its close callback means all are gone.
    const closed = new Promise<void>((resolve) => front.close(() => resolve()));
    // A connection still being sniffed was accepted before the stop and may be sending a request: it is
    // handed over as usual (HTTP/1.1 answered with `Connection: close`, HTTP/2 sent a GOAWAY), unless it
    // stays silent as long as an idle keep-alive connection may (drainHttp1).
    stopping = true;
    const sweep = setInterval(() => {
      void afterPendingIo().then(() => {
        const now = Date.now();
        for (const [socket, since] of sniffing) if (now - since >= SHUTDOWN_IDLE_QUIET_MS) socket.destroy();
      });
    }, 50);
    for (const session of sessions) session.close();
    const cut = setTimeout(() => {
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
    }, graceMs);
    try {
      // HTTP/1.1 connections end with a `Connection: close` response or after a quiet spell, never mid-request.
      await Promise.all([closed, drainHttp1(http1, graceMs)]);
    } finally {
      clearInterval(sweep);
      clearTimeout(cut);
      // Stops the http server's timeout checks; it has no connection left to close.
      http1.close();
      http2.close();
    }
  };

  return { server: front, shutdown };
}
