/**
 * What every REST transport reads from a node:http request (or node:http2's compatibility request, the
 * one-port server's REST side) the same way, whatever its framework: the JSON body within its limit, the
 * Host and Authorization fields as received, the caller's key for the login gate, and the request's done
 * signal. One place, so that node:http and Koa refuse and answer alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { ErrBadHostHeader, ErrBodyTooLarge, ErrClientClosed, ErrUnsupportedMediaType, REQUEST_ENDED } from '../../errors/table.ts';

type AnyRequest = IncomingMessage | Http2ServerRequest;

/** Our choice for "request body size limit: not shown" (spec 8). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Rule HTTP-json-content-type: a body is read only when it says it is JSON (`application/json` or a
 * `+json` type, charset UTF-8 if named), or says nothing; anything else (curl -d's form type, text,
 * XML) is 415 before a byte is read, never parsed as JSON by accident.
 */
export function checkJsonContentType(contentType: string | undefined): void {
  if (contentType === undefined) return;
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  const json = type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
  const charset = parameters
    .find((parameter) => parameter.startsWith('charset='))
    ?.slice('charset='.length)
    .replaceAll('"', '');
  if (!json || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) throw new ErrUnsupportedMediaType();
}

/** Reads a JSON request body as UTF-8, refusing more than `limit` bytes without buffering the rest (rule LIMIT-body-size). */
export async function readBody(req: AnyRequest, limit = MAX_BODY_BYTES): Promise<string> {
  checkJsonContentType(req.headers['content-type']);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new ErrBodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new ErrBodyTooLarge();
      chunks.push(chunk);
    }
  } catch (error) {
    // A client that hangs up mid-body is not a server fault: no panic line, nobody left to answer.
    if (error instanceof ErrBodyTooLarge) throw error;
    throw new ErrClientClosed(undefined, { cause: error });
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Every value of a field, as received: node:http keeps only the first of a repeated singleton field.
 * rawHeaders is name, value pairs (node:http and node:http2 alike), so its length is even.
 */
function fieldValues(req: AnyRequest, name: string): string[] {
  const values: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) values.push(raw[i + 1]!);
  return values;
}

/**
 * The Authorization header for the shared authentication step, or undefined when absent or sent more
 * than once: two credentials are no credential (rule AUTH-single-header), so the caller gets 401
 * `missing or malformed Authorization header` instead of the first one winning.
 */
export function authorizationHeader(req: AnyRequest): string | undefined {
  const values = fieldValues(req, 'authorization');
  return values.length === 1 ? values[0] : undefined;
}

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host, or any request with more than one, is answered
 * 400 (rule HTTP-host-header). HTTP/2 carries :authority instead and is left to its own framing.
 */
export function checkHostHeader(req: AnyRequest): void {
  if (req.httpVersionMajor !== 1) return;
  const count = fieldValues(req, 'host').length;
  if (count > 1 || (count === 0 && req.httpVersionMinor >= 1)) throw new ErrBadHostHeader();
}

/**
 * The opaque caller key the core's login gate queues by (rule LOGIN-gate-fair): the TCP peer address, as
 * the rate limiter keys (X-Forwarded-For is not trusted, spec 4.3 rule 4).
 */
export function clientKey(req: AnyRequest): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/**
 * A request's done signal (spec 3.2 rule 2): it aborts when the response closes, whether the handler
 * answered or the client went away, so a session lease the handler forgot to release is released then,
 * and a holder that only checks `signal.aborted` later sees the request is over.
 */
export function requestDoneSignal(res: ServerResponse | Http2ServerResponse): AbortSignal {
  const done = new AbortController();
  res.once('close', () => done.abort(REQUEST_ENDED));
  return done.signal;
}
