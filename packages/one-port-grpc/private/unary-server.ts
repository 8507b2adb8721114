/**
 * A small gRPC server (rule GRPC-service): unary and server-streaming calls, protobuf only, on single streams
 * of a node:http2 server it does not own (the one-port front); why by hand: ../README.md. `+json` and
 * grpc-web get HTTP 415 (rule GRPC-content-type), request compression identity or gzip (rule
 * GRPC-compression), one message of at most 1 MiB (rule GRPC-message-size), clamped deadlines (rule
 * GRPC-timeout-clamp), authentication before a byte of the message is read (rule GRPC-auth-before-body), a
 * done signal aborted on answer, reset or deadline (rule GRPC-cancel).
 */
import type { IncomingHttpHeaders, Http2ServerRequest, Http2ServerResponse, ServerHttp2Stream } from 'node:http2';
import { constants as h2 } from 'node:http2';
import { fromBinary, toBinary, type DescMessage, type Message } from '@bufbuild/protobuf';
import { encodeGrpcMessage, frameMessage, MALFORMED_MESSAGE, parseGrpcTimeout, readUnaryMessage, Status } from './wire.ts';

/** What a method's handler gets besides its message. */
export interface UnaryCall<P> {
  /** Full method name, `/package.Service/Method`. */
  readonly method: string;
  /** What `authenticate` returned (undefined for the methods it exempts). */
  readonly principal: P | undefined;
  /** Aborted when the call ends for any reason: answered, reset by the client, past its deadline. */
  readonly signal: AbortSignal;
  /** The request's metadata (HTTP/2 headers), e.g. `idempotency-key`. */
  readonly headers: IncomingHttpHeaders;
  /** The TCP peer address of the caller. */
  readonly peer: string;
}

export interface UnaryMethod<P> {
  readonly input: DescMessage;
  readonly output: DescMessage;
  readonly handle: (request: Message, call: UnaryCall<P>) => Promise<Message>;
}

/**
 * One request message in, any number of response messages out (e.g. grpc.health.v1.Health/Watch): `send`
 * writes one; the call ends OK when `handle` resolves, with its status when it throws.
 */
export interface ServerStreamMethod<P> {
  readonly kind: 'server-stream';
  readonly input: DescMessage;
  readonly output: DescMessage;
  readonly handle: (request: Message, call: UnaryCall<P>, send: (message: Message) => void) => Promise<void>;
}

/** A gRPC status as it goes into the trailers. */
export interface CallStatus {
  readonly code: number;
  readonly message: string;
}

export interface UnaryServerOptions<P> {
  /** By full method name. Anything else is UNIMPLEMENTED. */
  readonly methods: ReadonlyMap<string, UnaryMethod<P> | ServerStreamMethod<P>>;
  /** Runs on the headers alone, before a byte of the message is read or inflated; throws to refuse the call. */
  readonly authenticate: (method: string, headers: IncomingHttpHeaders) => P | undefined | Promise<P | undefined>;
  /** Any error thrown by `authenticate` or a handler → its status (and the logging of unexpected ones). */
  readonly toStatus: (error: unknown, method: string) => CallStatus;
  /** Told of every call's start and end (spans, metrics). */
  readonly observe?: CallObserver;
}

/** `unary` or `server_stream`; undefined for a path no method serves. */
export type CallKind = 'unary' | 'server_stream';

/** What the observer is told of one call: its end, with the status it was answered (or ended) with. */
export interface CallObservation {
  end(code: number): void;
}

export interface CallObserver {
  /** A call starts (inside `scope`, if any). `kind` is undefined for a path no method serves. */
  start(path: string, kind: CallKind | undefined, headers: IncomingHttpHeaders): CallObservation;
  /** Runs each call inside a context of the observer's (an AsyncLocalStorage scope); `close` once the call has ended. */
  scope?(work: (close: () => void) => void): void;
}

/** The Content-Types served: protobuf only. `+json` and everything else after `application/grpc` is refused. */
const PROTO_CONTENT_TYPE = /^application\/grpc(\+proto)?(;.*)?$/;
const RESPONSE_HEADERS = { 'content-type': 'application/grpc+proto', 'grpc-accept-encoding': 'gzip' };
const OK_TRAILERS = { 'grpc-status': '0' };
const OK: CallStatus = { code: Status.OK, message: '' };
const UNSUPPORTED_CONTENT_TYPE: CallStatus = { code: Status.UNIMPLEMENTED, message: 'unsupported content type' };

/** The server as a node:http2 compatibility-API request handler; the message is read from the raw stream. */
export function createUnaryServer<P>(options: UnaryServerOptions<P>): (req: Http2ServerRequest, res: Http2ServerResponse) => void {
  const observer = options.observe;
  const scope = observer?.scope?.bind(observer) ?? ((work: (close: () => void) => void) => work(() => undefined));
  return (req, res) => scope((close) => new ServerCall(options, req, res, close).start());
}

/** Content-Type, method, grpc-encoding and grpc-timeout, in that order: the first that fails refuses the call. */
function refusal(headers: IncomingHttpHeaders, known: boolean, timeoutMs: number | undefined): CallStatus | undefined {
  // Not a gRPC encoding we serve (grpc-web, +json, ...): the protocol's answer is HTTP 415.
  if (!PROTO_CONTENT_TYPE.test(headers['content-type'] ?? '')) return UNSUPPORTED_CONTENT_TYPE;
  if (!known) return { code: Status.UNIMPLEMENTED, message: 'unknown service or method' };
  const encoding = headers['grpc-encoding'];
  if (encoding !== undefined && encoding !== 'identity' && encoding !== 'gzip') {
    return { code: Status.UNIMPLEMENTED, message: `unsupported grpc-encoding ${encoding}` };
  }
  if (Number.isNaN(timeoutMs)) return { code: Status.INVALID_ARGUMENT, message: 'malformed grpc-timeout' };
  return undefined;
}

/** One call, from its headers to its status: `settled` (observed, scope closed) and `answered` each happen once. */
class ServerCall<P> {
  private readonly options: UnaryServerOptions<P>;
  private readonly req: Http2ServerRequest;
  private readonly res: Http2ServerResponse;
  private readonly stream: ServerHttp2Stream;
  private readonly closeScope: () => void;
  private readonly path: string;
  private observation: CallObservation | undefined;
  private readonly done = new AbortController();
  private settled = false;
  private answered = false;

  constructor(options: UnaryServerOptions<P>, req: Http2ServerRequest, res: Http2ServerResponse, closeScope: () => void) {
    this.options = options;
    this.req = req;
    this.res = res;
    this.stream = req.stream;
    this.closeScope = closeScope;
    this.path = req.headers[':path'] ?? '';
  }

  start(): void {
    const method = this.options.methods.get(this.path);
    const kind = method === undefined ? undefined : 'kind' in method ? 'server_stream' : 'unary';
    this.observation = this.options.observe?.start(this.path, kind, this.req.headers);
    const timeoutMs = parseGrpcTimeout(this.req.headers['grpc-timeout'] as string | undefined);
    const refused = refusal(this.req.headers, method !== undefined, timeoutMs);
    if (refused !== undefined) {
      // Refused on its headers alone: a trailers-only answer.
      this.settle(refused.code);
      return answer(this.stream, refused, refused === UNSUPPORTED_CONTENT_TYPE ? 415 : 200);
    }
    // Whatever closes the stream ends the call's work (rule GRPC-cancel); before an answer it is CANCELLED, as grpc-go counts it.
    this.stream.once('close', () => {
      this.answered = true;
      this.settle(Status.CANCELLED);
      this.done.abort();
    });
    if (timeoutMs !== undefined) {
      // The client's deadline (rule GRPC-timeout-clamp): DEADLINE_EXCEEDED, and the call's work is aborted.
      const timer = setTimeout(() => {
        this.finish({ code: Status.DEADLINE_EXCEEDED, message: 'deadline exceeded' });
        this.done.abort();
      }, timeoutMs);
      this.stream.once('close', () => clearTimeout(timer));
    }
    // An unknown method was refused above.
    void this.run(method!, this.req.headers['grpc-encoding'] === 'gzip');
  }

  /** Authenticate on the headers, read and decode the one message, then the method's handler. */
  private async run(method: UnaryMethod<P> | ServerStreamMethod<P>, gzip: boolean): Promise<void> {
    let principal: P | undefined;
    try {
      principal = await this.options.authenticate(this.path, this.req.headers);
    } catch (error) {
      return this.fail(error);
    }
    if (this.answered) return;
    const read = await readUnaryMessage(this.stream, gzip);
    if (!read.ok) return this.finish(read);
    if (this.answered) return;
    let request: Message;
    try {
      request = fromBinary(method.input, read.message);
    } catch {
      // The parser's own words (offsets, wire types) are not for the client.
      return this.finish({ code: Status.INVALID_ARGUMENT, message: MALFORMED_MESSAGE });
    }
    const call = {
      method: this.path,
      principal,
      signal: this.done.signal,
      headers: this.req.headers,
      peer: this.req.socket.remoteAddress ?? 'unknown',
    };
    if ('kind' in method) return this.serveStream(method, request, call);
    try {
      const reply = await method.handle(request, call);
      this.finish(OK, toBinary(method.output, reply));
    } catch (error) {
      this.fail(error);
    }
  }

  /** A failure of `authenticate` or the handler, but not the call's own done signal: the call had ended already. */
  private fail(error: unknown): void {
    if (this.done.signal.aborted && error === this.done.signal.reason) return;
    this.finish(this.options.toStatus(error, this.path));
  }

  /** Headers go with the first message; a stream that ends before any is answered trailers-only. */
  private async serveStream(method: ServerStreamMethod<P>, request: Message, call: UnaryCall<P>): Promise<void> {
    try {
      await method.handle(request, call, (message) => this.send(method.output, message));
    } catch (error) {
      return this.fail(error);
    }
    this.finish(OK);
  }

  /** One message of a server stream. */
  private send(output: DescMessage, message: Message): void {
    if (this.answered) return;
    if (!this.res.headersSent) this.res.writeHead(200, RESPONSE_HEADERS);
    this.res.write(frameMessage(toBinary(output, message)));
  }

  /** Observed with its status and its scope closed, once. */
  private settle(code: number): void {
    if (this.settled) return;
    this.settled = true;
    this.observation?.end(code);
    this.closeScope();
  }

  /** The call's one answer: the reply message, a server stream's trailers, or a trailers-only status. */
  private finish(status: CallStatus, message?: Uint8Array): void {
    if (this.answered) return;
    this.answered = true;
    // A stream already closed (reset by the client) takes no answer: the call ended CANCELLED, as grpc-go counts it.
    const gone = this.stream.closed || this.stream.destroyed;
    this.settle(gone ? Status.CANCELLED : status.code);
    if (gone) return;
    if (message !== undefined) {
      this.res.writeHead(200, RESPONSE_HEADERS);
      this.res.addTrailers(OK_TRAILERS);
      this.res.end(frameMessage(message));
    } else if (this.res.headersSent) {
      // A server stream already under way: the status goes in its trailers.
      this.res.addTrailers(
        status.code === Status.OK ? OK_TRAILERS : { 'grpc-status': String(status.code), 'grpc-message': encodeGrpcMessage(status.message) },
      );
      this.res.end();
    } else answer(this.stream, status);
  }
}

/**
 * A trailers-only answer, one HEADERS frame with END_STREAM, on the stream itself (the compatibility API would
 * end with a separate empty frame, read as "no status"). A request still sending is then reset with NO_ERROR
 * (RFC 9113 section 8.1): its unread bytes are neither kept nor waited for (rule H2-stream-slot).
 */
function answer(stream: ServerHttp2Stream, status: CallStatus, httpStatus = 200): void {
  if (stream.headersSent || stream.closed || stream.destroyed) return;
  stream.respond(
    {
      ':status': httpStatus,
      'content-type': 'application/grpc+proto',
      'grpc-status': String(status.code),
      'grpc-message': encodeGrpcMessage(status.message),
    },
    { endStream: true },
  );
  if (!stream.state.remoteClose) stream.close(h2.NGHTTP2_NO_ERROR);
}
