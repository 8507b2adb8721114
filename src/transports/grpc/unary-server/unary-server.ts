import type { IncomingHttpHeaders, Http2ServerRequest, Http2ServerResponse, ServerHttp2Stream } from 'node:http2';
import { constants as h2 } from 'node:http2';
import { fromBinary, toBinary, type DescMessage, type Message } from '@bufbuild/protobuf';
import { REQUEST_ENDED } from '../../http/rest/request-ended.ts';
import { runInRequestScope } from '../../../observability/request-trace.ts';
import type { CallObserver } from './call-observer.ts';
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

/**
 * A unary-only gRPC server on node:http2 (rule GRPC-service): one request message in, one response
 * message or a status out, with the limits of rules GRPC-message-size, GRPC-timeout-clamp and
 * GRPC-auth-before-body. Takes the compatibility request and response the one-port dispatcher already
 * has; reads the message from the raw stream.
 */
export function createUnaryServer<P>(options: UnaryServerOptions<P>): (req: Http2ServerRequest, res: Http2ServerResponse) => void {
  const { methods } = options;
  // Each call runs in its own request scope: its span's ids reach every line it logs (rule TRACE-log-ids).
  return (req, res) => runInRequestScope((close) => serve(req, res, close));
  function serve(req: Http2ServerRequest, res: Http2ServerResponse, closeScope: () => void): void {
    const headers = req.headers;
    const stream = req.stream;
    const path = headers[':path'] ?? '';
    const method = methods.get(path);
    const observation = options.observe?.(path, method === undefined ? undefined : 'kind' in method ? 'server_stream' : 'unary', headers);
    let settled = false;
    const settle = (code: number): void => {
      if (settled) return;
      settled = true;
      observation?.end(code);
      closeScope();
    };
    const refuse = (status: CallStatus, httpStatus?: number): void => {
      settle(status.code);
      answer(stream, status, httpStatus);
    };
    if (!PROTO_CONTENT_TYPE.test(headers['content-type'] ?? '')) {
      // Not a gRPC encoding we serve (grpc-web, +json, ...): the protocol's answer is HTTP 415.
      return refuse({ code: Status.UNIMPLEMENTED, message: 'unsupported content type' }, 415);
    }
    if (method === undefined) return refuse({ code: Status.UNIMPLEMENTED, message: 'unknown service or method' });
    const encoding = headers['grpc-encoding'];
    if (encoding !== undefined && encoding !== 'identity' && encoding !== 'gzip') {
      return refuse({ code: Status.UNIMPLEMENTED, message: `unsupported grpc-encoding ${encoding}` });
    }
    const timeoutMs = parseGrpcTimeout(headers['grpc-timeout'] as string | undefined);
    if (Number.isNaN(timeoutMs)) return refuse({ code: Status.INVALID_ARGUMENT, message: 'malformed grpc-timeout' });

    const done = new AbortController();
    let answered = false;
    const finish = (status: CallStatus, message?: Uint8Array): void => {
      if (answered) return;
      answered = true;
      // A stream already closed (reset by the client, whose reset may read as a cut-off message) takes
      // no answer: the call ended CANCELLED, as grpc-go counts it.
      const gone = stream.closed || stream.destroyed;
      settle(gone ? Status.CANCELLED : status.code);
      if (gone) return;
      if (message !== undefined) {
        res.writeHead(200, RESPONSE_HEADERS);
        res.addTrailers(OK_TRAILERS);
        res.end(frameMessage(message));
      } else if (res.headersSent) {
        // A server stream already under way: the status goes in its trailers.
        res.addTrailers(status.code === Status.OK ? OK_TRAILERS : { 'grpc-status': String(status.code), 'grpc-message': encodeGrpcMessage(status.message) });
        res.end();
      } else answer(stream, status);
    };
    // The done signal of the call (spec 3.2 rule 2): whatever closes the stream ends the call's work.
    stream.once('close', () => {
      answered = true;
      // Ended before an answer (reset by the client, the connection lost): CANCELLED, as grpc-go counts it.
      settle(Status.CANCELLED);
      done.abort(REQUEST_ENDED);
    });
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        finish({ code: Status.DEADLINE_EXCEEDED, message: 'deadline exceeded' });
        done.abort(REQUEST_ENDED);
      }, timeoutMs);
      stream.once('close', () => clearTimeout(timer));
    }

    // Headers go with the first message; a stream that ends before any is answered trailers-only.
    const serverStream = async (method: ServerStreamMethod<P>, request: Message, call: UnaryCall<P>): Promise<void> => {
      const send = (message: Message): void => {
        if (answered) return;
        if (!res.headersSent) res.writeHead(200, RESPONSE_HEADERS);
        res.write(frameMessage(toBinary(method.output, message)));
      };
      let status: CallStatus = { code: Status.OK, message: '' };
      try {
        await method.handle(request, call, send);
      } catch (error) {
        status = options.toStatus(error, path);
      }
      finish(status);
    };

    void (async () => {
      let principal: P | undefined;
      try {
        principal = await options.authenticate(path, headers);
      } catch (error) {
        return finish(options.toStatus(error, path));
      }
      if (answered) return;
      const read = await readUnaryMessage(stream, encoding === 'gzip');
      if (!read.ok) return finish(read);
      if (answered) return;
      let request: Message;
      try {
        request = fromBinary(method.input, read.message);
      } catch {
        // The parser's own words (offsets, wire types) are not for the client.
        return finish({ code: Status.INVALID_ARGUMENT, message: MALFORMED_MESSAGE });
      }
      const call = { method: path, principal, signal: done.signal, headers, peer: req.socket.remoteAddress ?? 'unknown' };
      if ('kind' in method) return serverStream(method, request, call);
      try {
        const reply = await method.handle(request, call);
        finish({ code: Status.OK, message: '' }, toBinary(method.output, reply));
      } catch (error) {
        finish(options.toStatus(error, path));
      }
    })();
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
    { ':status': httpStatus, 'content-type': 'application/grpc+proto', 'grpc-status': String(status.code), 'grpc-message': encodeGrpcMessage(status.message) },
    { endStream: true },
  );
  if (!stream.state.remoteClose) stream.close(h2.NGHTTP2_NO_ERROR);
}
