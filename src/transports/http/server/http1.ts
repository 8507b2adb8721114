/**
 * The public HTTP/1.1 server every node:http transport runs on (orders-stdlib, orders-koa, the one-port
 * server's HTTP/1.1 side): its options and timeouts, the Error-bodied answers to what never reaches a
 * handler, pipelined requests run one at a time, and the staged close after `Connection: close`. One
 * place, so that every executable refuses the same requests the same way.
 */
import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HTTP1_SERVER_TIMEOUTS, TIMEOUT_CHECK_INTERVAL_MS, type ServerTimeouts } from './timeouts.ts';

/** How composition tunes an HTTP/1.1 server (transports/transport.ts, ServerChoices). */
export interface Http1Settings {
  /** Tests only: shorter timeouts (timeouts.ts http1Timeouts); the declared ones otherwise. */
  readonly timeouts?: ServerTimeouts;
  /** The response class, when the speed ring gives one (speed/turn-end-response.ts); Node's own ServerResponse otherwise. */
  readonly response?: typeof ServerResponse;
}

/**
 * Every node:http public server's options, once (orders-stdlib, orders-koa, the one-port server's
 * HTTP/1.1 side). Node enforces headersTimeout and requestTimeout only when it sweeps its connections,
 * every connectionsCheckingInterval (30 s by default, so a declared 10 s fired at up to 40 s): the
 * sweep runs often enough to keep the declared values (rule LIMIT-timeouts). Host is checked by our
 * own step (http/rest/request.ts) so that a missing one, too, gets an Error body.
 */
export function http1ServerOptions(timeouts: ServerTimeouts = HTTP1_SERVER_TIMEOUTS, response?: Http1Settings['response']): ServerOptions {
  return {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.idleMs,
    // A test's short timeouts (timeouts.ts http1Timeouts) get a sweep as fine as the production ones have.
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, Math.max(10, Math.floor(timeouts.headersMs / 10))),
    requireHostHeader: false,
    // The speed ring's class when composition gives one; Node's own ServerResponse otherwise.
    ...(response === undefined ? {} : { ServerResponse: response }),
  };
}

export const HTTP1_SERVER_OPTIONS: ServerOptions = http1ServerOptions();

/**
 * A public HTTP/1.1 server: the shared options, the shared answers to what never reaches a handler,
 * and pipelined requests run one at a time (oneRequestAtATime). `settings` come from composition
 * (Http1Settings): tests' shorter timeouts, the response class.
 */
export function createHttp1Server(handler: RequestListener, settings: Http1Settings = {}): Server {
  return withSharedAnswers(createServer(http1ServerOptions(settings.timeouts, settings.response), oneRequestAtATime(handler)));
}

interface ParserAnswer {
  readonly status: number;
  readonly message: string;
}

/**
 * Node's parser and timers answer these before any handler runs, with an empty body by default. Ours
 * are the same statuses with an Error body (rule HTTP-parser-errors). Any other parser error is 400.
 */
const PARSER_ANSWERS: Readonly<Record<string, ParserAnswer>> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'request header fields too large' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, message: 'request body too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'request timeout' },
};
const BAD_REQUEST: ParserAnswer = { status: 400, message: 'bad request' };
const EXPECTATION_FAILED: ParserAnswer = { status: 417, message: 'expectation failed' };
/** CONNECT: no resource here is a tunnel; the same status and text as any other method a route lacks. */
const CONNECT_REFUSED: ParserAnswer = { status: 405, message: 'method not allowed' };
const SERVED_METHODS = 'GET, HEAD, POST';

function rawResponse(answer: ParserAnswer, extraHeaders = ''): string {
  const body = JSON.stringify({ error: answer.message });
  const reason = STATUS_CODES[answer.status] ?? '';
  return (
    `HTTP/1.1 ${answer.status} ${reason}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}Connection: close\r\n\r\n${body}`
  );
}

/** Writes the answer (unless a response already started on this socket) and closes the connection. */
function answerOnSocket(socket: Duplex, answer: ParserAnswer, extraHeaders = ''): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  socket.end(rawResponse(answer, extraHeaders), () => socket.destroy());
  // A peer that never reads must not keep the socket: the answer had its chance.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/**
 * The shared answers: parser errors and timeouts (clientError), a refused Expect (checkExpectation) and
 * CONNECT, all as `{"error": "..."}` with Content-Type application/json, and the staged close of a
 * `Connection: close` answer (lingerBeforeClose).
 */
function withSharedAnswers(server: Server): Server {
  lingerBeforeClose(server);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A peer that reset or went away mid-request is owed nothing.
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE') return void socket.destroy();
    answerOnSocket(socket, PARSER_ANSWERS[error.code ?? ''] ?? BAD_REQUEST);
  });
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify({ error: EXPECTATION_FAILED.message });
    res.writeHead(EXPECTATION_FAILED.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => answerOnSocket(socket, CONNECT_REFUSED, `Allow: ${SERVED_METHODS}\r\n`));
  return server;
}

/**
 * Pipelined requests beyond this many waiting on one connection close it: no client we know of
 * pipelines deeper, and one read of 64 KB can hold ~1,000 small requests (rule HTTP1-pipeline-bound).
 */
export const HTTP1_PIPELINE_DEPTH = 32;

/**
 * Runs the requests of one HTTP/1.1 connection one at a time: a pipelined request waits until the
 * answer before it has been handed to the kernel ('finish'); if the connection goes first, it never runs.
 * Node parses every request of a read at once and holds each answer until the ones before it are
 * written, so a client pipelining 10,000 list requests without reading made the server run ~850 of
 * them and hold ~40 MB per connection; with this it holds one answer (rule HTTP1-pipeline-bound).
 */
export function oneRequestAtATime(handler: RequestListener, depth = HTTP1_PIPELINE_DEPTH): RequestListener {
  /** Per connection with a request running: the requests waiting behind it. */
  const waiting = new WeakMap<Socket, Array<() => void>>();
  const run = (socket: Socket, req: IncomingMessage, res: ServerResponse): void => {
    // Written: the next one runs. Closed before that: the connection is gone, and so are they; a response
    // whose head went out still emits 'finish' if its handler ends it after the close, and finds no queue.
    res.once('finish', () => {
      const following = waiting.get(socket)?.shift();
      if (following === undefined) waiting.delete(socket);
      else following();
    });
    res.once('close', () => {
      if (!res.writableFinished) waiting.delete(socket);
    });
    handler(req, res);
  };
  return (req, res) => {
    const socket = req.socket;
    const queue = waiting.get(socket);
    if (queue === undefined) {
      waiting.set(socket, []);
      return run(socket, req, res);
    }
    if (queue.length >= depth) return void socket.destroy();
    queue.push(() => run(socket, req, res));
  };
}

/** How long a closing connection keeps reading what the client still sends (rule HTTP-close-linger). */
export const LINGER_MS = 1_000;

/**
 * Rule HTTP-close-linger (RFC 9112 §9.6, "tear-down"). After an answer with `Connection: close`, Node
 * ends the socket and destroys it at once (net.Socket#destroySoon). A client still sending its body, as
 * one refused with 413 before a byte of it was read does, then writes into a closed socket: the reset
 * that follows can discard the answer before the client reads it, and a relay (Docker's port proxy)
 * drops it outright, so the client sees EPIPE, not 413. Node has no option for a staged close, so this
 * replaces the one step: send the FIN, keep reading (the parser drops the rest of the body), and destroy
 * when the client closes its side or after `lingerMs`, whichever comes first: a client that never stops
 * sending holds the socket for that long at most.
 */
export function lingerBeforeClose(server: Server, lingerMs = LINGER_MS): void {
  server.on('connection', (socket: Socket) => {
    // Node calls the socket's destroySoon once the closing answer is written.
    socket.destroySoon = () => {
      socket.end();
      const timer = setTimeout(() => socket.destroy(), lingerMs);
      // A linger keeps no process alive, and a socket closed first takes its timer with it.
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
    };
  });
}
