import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { SHUTDOWN_GRACE_MS } from '../http/http-shutdown.ts';
import { HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../http/server-timeouts.ts';

export type AnyRequest = IncomingMessage | Http2ServerRequest;
export type AnyResponse = ServerResponse | Http2ServerResponse;
/** A request handler usable by both node:http and node:http2's compatibility API. */
export type AnyRequestHandler = (req: AnyRequest, res: AnyResponse) => void;

/** What every prior-knowledge HTTP/2 connection starts with (RFC 9113 section 3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * Our choice for an idle HTTP/2 connection (spec 8: timeouts not shown): closed gracefully (GOAWAY)
 * after this long without a byte, so abandoned clients do not hold sessions forever. Longer than the
 * HTTP/1.1 keep-alive because gRPC channels are meant to be reused.
 */
export const HTTP2_IDLE_TIMEOUT_MS = 60_000;

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
  readonly grpc: AnyRequestHandler;
  /** The REST app with all its HTTP middleware (spec 4.4 rule 3: the dispatcher itself is not wrapped). */
  readonly rest: AnyRequestHandler;
  readonly graceMs?: number;
  readonly sniffTimeoutMs?: number;
}

export interface OnePortServer {
  /** The listening socket: the lifecycle's Listener binds and watches this one. */
  readonly server: Server;
  /** Stop accepting, GOAWAY to HTTP/2 sessions, close HTTP/1.1 connections as they go idle, cut after the grace. */
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
    if (isGrpcRequest(req.httpVersionMajor, req.headers['content-type'])) options.grpc(req, res);
    else options.rest(req, res);
  };

  const http1 = createHttpServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS },
    dispatch,
  );
  // An http server fed through emit('connection') never listens itself, and only 'listening' starts its
  // connection tracking: without it the timeouts above and closeIdleConnections() do nothing.
  http1.emit('listening');

  const http2 = createHttp2Server({}, dispatch);
  const sessions = new Set<ServerHttp2Session>();
  http2.on('session', (session) => {
    session.setTimeout(HTTP2_IDLE_TIMEOUT_MS, () => session.close());
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });

  const sockets = new Set<Socket>();
  const sniffing = new Set<Socket>();
  // The http server would disable Nagle on sockets it accepts itself; here the front accepts them.
  const front = createNetServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    sniffing.add(socket);
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
        // The http server reads through a 'data' listener it attaches in this same tick: stay flowing.
        socket.unshift(received);
        http1.emit('connection', socket);
      }
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', release);
  });

  const shutdown = async (): Promise<void> => {
    // The front counts every socket it accepted, handed over or not: its close callback means all are gone.
    const closed = new Promise<void>((resolve) => front.close(() => resolve()));
    for (const socket of sniffing) socket.destroy();
    for (const session of sessions) session.close();
    http1.close();
    http1.closeIdleConnections();
    const sweep = setInterval(() => http1.closeIdleConnections(), 50);
    const cut = setTimeout(() => {
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
    }, graceMs);
    try {
      await closed;
    } finally {
      clearInterval(sweep);
      clearTimeout(cut);
      http2.close();
    }
  };

  return { server: front, shutdown };
}
