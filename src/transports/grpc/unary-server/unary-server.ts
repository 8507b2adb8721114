/**
 * A small gRPC server on node:http2 (rule GRPC-service), written by hand for one reason: orders-grpc serves
 * gRPC and REST on one port and routes each request, not each connection (spec 4.4 rules 1-2, rule
 * ONEPORT-dispatch; one-port-server.ts): one HTTP/2 connection may carry REST requests and gRPC calls
 * side by side, so the gRPC side must take a single stream that a node:http2 server it does not own
 * already accepted.
 * - @grpc/grpc-js cannot: its Server takes whole connections only (bindAsync owns a listening socket,
 *   createConnectionInjector().injectConnection takes a socket) and then serves every stream on them.
 * - Connect (@connectrpc/connect-node's connectNodeAdapter) can, on the compatibility request and response,
 *   and this service once used it that way; it cost 3.2-4.9x grpc-js's CPU per GetOrder call, where this
 *   server costs 0.63-0.80x (reports/bench.md, "gRPC GetOrder: this server and its peers": same work, same
 *   core, peers in bench/grpc-peers/).
 * Use grpc-js or Connect if you do not need one port for both: they are complete, maintained and tested
 * against every other gRPC implementation; this file and its neighbours are what one port costs.
 *
 * What it supports: unary calls and server-streaming ones (grpc.health.v1.Health/Watch); protobuf only
 * (`application/grpc`, `application/grpc+proto`; `+json` and grpc-web get HTTP 415, rule GRPC-content-type);
 * request compression identity or gzip, responses uncompressed (rule GRPC-compression); one message of at
 * most 1 MiB (rule GRPC-message-size); `grpc-timeout` deadlines, clamped (rule GRPC-timeout-clamp);
 * authentication on the headers before a byte of the message is read (rule GRPC-auth-before-body); a done
 * signal that aborts on answer, reset or deadline (rule GRPC-cancel); trailers-only error answers. Not
 * supported: client streaming, bidirectional streaming, reflection (rule GRPC-no-reflection), response
 * compression. The HTTP/2 limits around it are Node's own plus http2-limits.ts.
 */
import type { IncomingHttpHeaders, Http2ServerRequest, Http2ServerResponse, ServerHttp2Stream } from 'node:http2';
import { constants as h2 } from 'node:http2';
import { fromBinary, toBinary, type DescMessage, type Message } from '@bufbuild/protobuf';
import { REQUEST_ENDED } from '../../errors/table.ts';
import { runInRequestScope } from '../../../observability/request-trace.ts';
import type { CallObservation, CallObserver } from './call-observer.ts';
import { MALFORMED_MESSAGE, readUnaryMessage } from './read-message.ts';
import { encodeGrpcMessage, frameMessage, parseGrpcTimeout, Status } from './wire.ts';

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
  /** The TCP peer address: the caller key of the login gate (rule LOGIN-gate-fair), as on REST. */
  readonly peer: string;
}

export interface UnaryMethod<P> {
  readonly input: DescMessage;
  readonly output: DescMessage;
  readonly handle: (request: Message, call: UnaryCall<P>) => Promise<Message>;
}

/**
 * One request message in, any number of response messages out (grpc.health.v1.Health/Watch): `send`
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
  /**
   * Runs on the headers alone, before a byte of the message is read or inflated (rule
   * GRPC-auth-before-body); throws to refuse the call.
   */
  readonly authenticate: (method: string, headers: IncomingHttpHeaders) => P | undefined | Promise<P | undefined>;
  /** Any error thrown by `authenticate` or a handler → its status (and the logging of unexpected ones). */
  readonly toStatus: (error: unknown, method: string) => CallStatus;
  /** Spans and metrics of every call, told its end exactly once (call-observer.ts). */
  readonly observe?: CallObserver;
}

/** The Content-Types served: protobuf only. `+json` and everything else after `application/grpc` is refused. */
const PROTO_CONTENT_TYPE = /^application\/grpc(\+proto)?(;.*)?$/;
const RESPONSE_HEADERS = { 'content-type': 'application/grpc+proto', 'grpc-accept-encoding': 'gzip' };
const OK_TRAILERS = { 'grpc-status': '0' };
const OK: CallStatus = { code: Status.OK, message: '' };

/**
 * The server as a handler of the one-port dispatcher: one request message in, one response message (or
 * a server stream's messages) or a status out, with the limits of rules GRPC-message-size, GRPC-timeout-clamp and
 * GRPC-auth-before-body. Takes the compatibility request and response the one-port dispatcher already
 * has; reads the message from the raw stream.
 */
export function createUnaryServer<P>(options: UnaryServerOptions<P>): (req: Http2ServerRequest, res: Http2ServerResponse) => void {
  // Each call runs in its own request scope: its span's ids reach every line it logs (rule TRACE-log-ids).
  return (req, res) => runInRequestScope((closeScope) => new ServerCall(options, req, res, closeScope).start());
}

/** What the headers alone decide: the call is refused, or admitted with how to read and time it. */
type Admission<P> =
  | { readonly refused: CallStatus; readonly httpStatus?: number }
  | {
      readonly refused?: undefined;
      readonly method: UnaryMethod<P> | ServerStreamMethod<P>;
      readonly gzip: boolean;
      readonly timeoutMs: number | undefined;
    };

/** Content-Type, method, grpc-encoding and grpc-timeout, in that order; the first that fails refuses the call. */
function admit<P>(headers: IncomingHttpHeaders, method: UnaryMethod<P> | ServerStreamMethod<P> | undefined): Admission<P> {
  if (!PROTO_CONTENT_TYPE.test(headers['content-type'] ?? '')) {
    // Not a gRPC encoding we serve (grpc-web, +json, ...): the protocol's answer is HTTP 415.
    return { refused: { code: Status.UNIMPLEMENTED, message: 'unsupported content type' }, httpStatus: 415 };
  }
  if (method === undefined) return { refused: { code: Status.UNIMPLEMENTED, message: 'unknown service or method' } };
  const encoding = headers['grpc-encoding'];
  if (encoding !== undefined && encoding !== 'identity' && encoding !== 'gzip') {
    return { refused: { code: Status.UNIMPLEMENTED, message: `unsupported grpc-encoding ${encoding}` } };
  }
  const timeoutMs = parseGrpcTimeout(headers['grpc-timeout'] as string | undefined);
  if (Number.isNaN(timeoutMs)) return { refused: { code: Status.INVALID_ARGUMENT, message: 'malformed grpc-timeout' } };
  return { method, gzip: encoding === 'gzip', timeoutMs };
}

/**
 * One call, from its headers to its status. Two flags keep its ends single: `settled` (observed and its
 * request scope closed, once) and `answered` (nothing more is written, once).
 */
class ServerCall<P> {
  private readonly options: UnaryServerOptions<P>;
  private readonly req: Http2ServerRequest;
  private readonly res: Http2ServerResponse;
  private readonly stream: ServerHttp2Stream;
  private readonly closeScope: () => void;
  private readonly path: string;
  private readonly method: UnaryMethod<P> | ServerStreamMethod<P> | undefined;
  private readonly observation: CallObservation | undefined;
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
    this.method = options.methods.get(this.path);
    const kind = this.method === undefined ? undefined : 'kind' in this.method ? 'server_stream' : 'unary';
    this.observation = options.observe?.(this.path, kind, req.headers);
  }

  start(): void {
    const admission = admit(this.req.headers, this.method);
    if (admission.refused !== undefined) return this.refuse(admission.refused, admission.httpStatus);
    this.endOnClose();
    if (admission.timeoutMs !== undefined) this.armDeadline(admission.timeoutMs);
    void this.run(admission.method, admission.gzip);
  }

  /** Authenticate on the headers, read and decode the one message, then the method's handler. */
  private async run(method: UnaryMethod<P> | ServerStreamMethod<P>, gzip: boolean): Promise<void> {
    let principal: P | undefined;
    try {
      principal = await this.options.authenticate(this.path, this.req.headers);
    } catch (error) {
      return this.finish(this.options.toStatus(error, this.path));
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
      this.finish(this.options.toStatus(error, this.path));
    }
  }

  /** Headers go with the first message; a stream that ends before any is answered trailers-only. */
  private async serveStream(method: ServerStreamMethod<P>, request: Message, call: UnaryCall<P>): Promise<void> {
    let status: CallStatus = OK;
    try {
      await method.handle(request, call, (message) => this.send(method.output, message));
    } catch (error) {
      status = this.options.toStatus(error, this.path);
    }
    this.finish(status);
  }

  /** One message of a server stream. */
  private send(output: DescMessage, message: Message): void {
    if (this.answered) return;
    if (!this.res.headersSent) this.res.writeHead(200, RESPONSE_HEADERS);
    this.res.write(frameMessage(toBinary(output, message)));
  }

  /** The done signal of the call (spec 3.2 rule 2): whatever closes the stream ends the call's work. */
  private endOnClose(): void {
    this.stream.once('close', () => {
      this.answered = true;
      // Ended before an answer (reset by the client, the connection lost): CANCELLED, as grpc-go counts it.
      this.settle(Status.CANCELLED);
      this.done.abort(REQUEST_ENDED);
    });
  }

  /** The client's deadline (rule GRPC-timeout-clamp): DEADLINE_EXCEEDED, and the call's work is aborted. */
  private armDeadline(timeoutMs: number): void {
    const timer = setTimeout(() => {
      this.finish({ code: Status.DEADLINE_EXCEEDED, message: 'deadline exceeded' });
      this.done.abort(REQUEST_ENDED);
    }, timeoutMs);
    this.stream.once('close', () => clearTimeout(timer));
  }

  /** Observed with its status and its request scope closed, once. */
  private settle(code: number): void {
    if (this.settled) return;
    this.settled = true;
    this.observation?.end(code);
    this.closeScope();
  }

  /** Refused on its headers alone: a trailers-only answer. */
  private refuse(status: CallStatus, httpStatus?: number): void {
    this.settle(status.code);
    answer(this.stream, status, httpStatus);
  }

  /** The call's one answer: the reply message, a server stream's trailers, or a trailers-only status. */
  private finish(status: CallStatus, message?: Uint8Array): void {
    if (this.answered) return;
    this.answered = true;
    // A stream already closed (reset by the client, whose reset may read as a cut-off message) takes
    // no answer: the call ended CANCELLED, as grpc-go counts it.
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
 * A trailers-only answer: one HEADERS frame with the status and END_STREAM, written on the stream
 * itself (the compatibility response would send the status in headers and end with a separate empty
 * frame, which clients read as "no status"). A request still sending (refused before its message was
 * read) is then reset with NO_ERROR (RFC 9113 section 8.1): its unread bytes are neither kept nor waited for.
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
