/**
 * The public HTTP/1.1 server every node:http transport runs on (orders-stdlib, orders-koa, orders-grpc's
 * HTTP/1.1 side): its options and timeouts, Error-bodied answers to what never reaches a handler, pipelined
 * requests run one at a time, and the staged close after `Connection: close`. One place, so every
 * executable refuses the same requests the same way.
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
import type { PublicTransport, ServerChoices } from '../../transport.ts';
import { closeHttpServer, trackConnections } from './shutdown.ts';
import { HTTP1_SERVER_TIMEOUTS, http1Timeouts, TIMEOUT_CHECK_INTERVAL_MS, type ServerTimeouts } from './timeouts.ts';

/** How composition tunes an HTTP/1.1 server: tests' shorter timeouts; the speed ring's response class (speed/turn-end-response.ts). */
export interface Http1Settings {
  readonly timeouts?: ServerTimeouts;
  readonly response?: typeof ServerResponse;
}

/**
 * Node enforces headersTimeout and requestTimeout only when it sweeps, every connectionsCheckingInterval (30 s
 * by default: a 10 s timeout fired at up to 40 s), so the sweep follows the declared values (rule
 * LIMIT-timeouts). Host is checked by our own step (http/rest/request.ts), so a missing one gets an Error body.
 */
export function http1ServerOptions(timeouts: ServerTimeouts = HTTP1_SERVER_TIMEOUTS, response?: Http1Settings['response']): ServerOptions {
  return {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.idleMs,
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, Math.max(10, Math.floor(timeouts.headersMs / 10))),
    requireHostHeader: false,
    ...(response === undefined ? {} : { ServerResponse: response }),
  };
}

/** A public HTTP/1.1 server, its connections tracked for the graceful stop (shutdown.ts). */
export function createHttp1Server(handler: RequestListener, settings: Http1Settings = {}): Server {
  const server = withSharedAnswers(createServer(http1ServerOptions(settings.timeouts, settings.response), oneRequestAtATime(handler)));
  trackConnections(server);
  return server;
}

/** orders-stdlib's and orders-koa's transport: the server, its declared timeouts, its graceful stop. */
export function http1Transport(handler: RequestListener, choices: ServerChoices = {}): PublicTransport {
  const timeouts = http1Timeouts(choices.platformTimeouts);
  const server = createHttp1Server(handler, { timeouts, response: choices.http1Response });
  return { server, shutdown: () => closeHttpServer(server), timeouts };
}

interface ParserAnswer {
  readonly status: number;
  readonly message: string;
}

/** Node answers these before any handler, with an empty body; ours carry an Error body (rule HTTP-parser-errors). */
const PARSER_ANSWERS: Readonly<Record<string, ParserAnswer>> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'request header fields too large' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, message: 'request body too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'request timeout' },
};
const BAD_REQUEST: ParserAnswer = { status: 400, message: 'bad request' };
/** CONNECT: no resource here is a tunnel; the answer to any method a route lacks. */
const CONNECT_REFUSED: ParserAnswer = { status: 405, message: 'method not allowed' };

function rawResponse(answer: ParserAnswer, extraHeaders = ''): string {
  const body = JSON.stringify({ error: answer.message });
  return (
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}Connection: close\r\n\r\n${body}`
  );
}

/** The response node:http has attached to the socket (the oldest one not yet finished), if any. */
function attachedResponse(socket: Duplex): ServerResponse | null | undefined {
  return (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
}

/** Writes the answer and closes the connection; a socket that closes meanwhile (a response's `Connection: close`) is destroyed. */
function answerOnSocket(socket: Duplex, answer: ParserAnswer, extraHeaders = ''): void {
  if (!socket.writable || attachedResponse(socket)?.headersSent === true) return void socket.destroy();
  socket.end(rawResponse(answer, extraHeaders), () => socket.destroy());
  // A peer that never reads must not keep the socket: the answer had its chance.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/**
 * Whether a parse error is about bytes after complete requests whose responses are still to come: the parser's
 * current request (node:http's `socket.parser.incoming`) is complete, and a response is in flight. A timeout,
 * or an error inside a request (its body's framing), is about the request being read: answered at once.
 */
function afterCompleteRequests(socket: Duplex, error: NodeJS.ErrnoException): boolean {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return false;
  const parser = (socket as Duplex & { parser?: { incoming?: IncomingMessage | null } | null }).parser;
  const inFlight = attachedResponse(socket);
  if (parser === null || parser === undefined || inFlight === null || inFlight === undefined) return false;
  return (parser.incoming === null || parser.incoming === undefined || parser.incoming.complete) && !inFlight.writableFinished;
}

/**
 * Rule HTTP-parser-errors: bytes that are not HTTP/1.1 after complete requests (`GET … \r\n\r\nXY`) are
 * answered after those requests' responses, in order, and then the connection closes: node:http reports the
 * error as soon as it parses the garbage, while the requests before it are still running, and writing the 400
 * then would put it in their place (the client reads it as the GET's answer) or cut them off. Reading stops
 * meanwhile: nothing more of this connection is parsed. Node attaches the next response when one finishes
 * (its own 'finish' listener runs first), so this follows the connection's responses one by one.
 */
function afterResponses(socket: Duplex, then: () => void): void {
  const inFlight = attachedResponse(socket);
  if (inFlight === null || inFlight === undefined || inFlight.writableFinished || socket.destroyed) return then();
  let next = (): void => {
    next = () => undefined;
    afterResponses(socket, then);
  };
  inFlight.once('finish', () => next());
  inFlight.once('close', () => next());
}

/** Parser errors and timeouts, a refused Expect and CONNECT as `{"error": …}`; the staged close (lingerBeforeClose). */
function withSharedAnswers(server: Server): Server {
  lingerBeforeClose(server);
  const answering = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A peer that reset or went away mid-request is owed nothing.
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE') return void socket.destroy();
    const answer = PARSER_ANSWERS[error.code ?? ''] ?? BAD_REQUEST;
    if (!afterCompleteRequests(socket, error)) return answerOnSocket(socket, answer);
    // The parser stays in error: more bytes on this connection report it again, and one answer is all it gets.
    if (answering.has(socket)) return;
    answering.add(socket);
    socket.pause();
    afterResponses(socket, () => {
      // A response before it closed the connection (`Connection: close`, as a 417 does): its staged close goes on.
      if (socket.writable) answerOnSocket(socket, answer);
    });
  });
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify({ error: 'expectation failed' });
    res.writeHead(417, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => answerOnSocket(socket, CONNECT_REFUSED, 'Allow: GET, HEAD, POST\r\n'));
  return server;
}

/** Rule HTTP1-pipeline-bound: no client we know pipelines deeper; one 64 KB read can hold ~1,000 small requests. */
const HTTP1_PIPELINE_DEPTH = 32;

/**
 * Rule HTTP1-pipeline-bound: a connection's requests run one at a time, each once the answer before it was
 * handed to the kernel ('finish'); past `depth` waiting, the connection closes. Node parses a whole read at
 * once and holds every answer until those before it are written: 10,000 pipelined lists made the server run
 * ~850 of them and hold ~40 MB per connection; with this it holds one answer.
 */
export function oneRequestAtATime(handler: RequestListener, depth = HTTP1_PIPELINE_DEPTH): RequestListener {
  /** Per connection with a request running: the requests waiting behind it. */
  const waiting = new WeakMap<Socket, Array<() => void>>();
  const run = (socket: Socket, req: IncomingMessage, res: ServerResponse): void => {
    // Closed before 'finish': the connection is gone, and so are they (a late 'finish' finds no queue).
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

/**
 * Rule HTTP-close-linger (RFC 9112 §9.6): after `Connection: close` Node destroys the socket at once
 * (destroySoon), so a client still sending (one refused 413 unread) meets a reset that can discard the
 * answer, and a relay (Docker's port proxy) drops it: EPIPE, not 413. Node has no staged close, so this
 * replaces the one step: FIN, keep reading, destroy when the client closes or after `lingerMs`.
 */
export function lingerBeforeClose(server: Server, lingerMs = 1_000): void {
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = () => {
      socket.end();
      const timer = setTimeout(() => socket.destroy(), lingerMs).unref();
      socket.once('close', () => clearTimeout(timer));
    };
  });
}
