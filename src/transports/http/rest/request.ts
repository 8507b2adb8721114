/**
 * What every REST transport reads from a node:http request (or node:http2's compatibility request, orders-grpc's
 * REST side) the same way, whatever its framework: the JSON body within its limit, the Host and Authorization
 * fields as received, the caller's key and the done signal. One place, so node:http and Koa refuse alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import {
  ErrBadHostHeader,
  ErrBodyTooLarge,
  ErrClientClosed,
  ErrUnsupportedContentEncoding,
  ErrUnsupportedMediaType,
  REQUEST_ENDED,
} from '../../errors/table.ts';
import type { RestRequest } from './api.ts';

type AnyRequest = IncomingMessage | Http2ServerRequest;

/** Our choice for "request body size limit: not shown" (spec 8). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Rule HTTP-json-content-type: a body is read only when it says it is JSON (`application/json` or `+json`,
 * charset UTF-8 if named) or says nothing; anything else is 415 before a byte is read.
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

/**
 * Rule HTTP-content-encoding (RFC 9110 sections 8.4 and 15.5.16): no content coding is decoded, so a body that
 * declares one (gzip, br, anything but `identity`) is 415 before a byte is read, never parsed as if plain.
 */
export function checkContentEncoding(contentEncoding: string | undefined): void {
  if (contentEncoding === undefined) return;
  const codings = contentEncoding.split(',').map((coding) => coding.trim().toLowerCase());
  if (codings.some((coding) => coding !== 'identity' && coding !== '')) throw new ErrUnsupportedContentEncoding();
}

/** A JSON body as UTF-8, refusing more than `limit` bytes without buffering the rest (rule LIMIT-body-size). */
export async function readBody(req: AnyRequest, limit = MAX_BODY_BYTES): Promise<string> {
  checkJsonContentType(req.headers['content-type']);
  checkContentEncoding(req.headers['content-encoding']);
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
    // A client that hangs up mid-body is no server fault: no panic line, nobody left to answer.
    if (error instanceof ErrBodyTooLarge) throw error;
    throw new ErrClientClosed(undefined, { cause: error });
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Every value of a field as received (node:http keeps only the first of a repeated singleton). */
function fieldValues(req: AnyRequest, name: string): string[] {
  const values: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) values.push(raw[i + 1]!);
  return values;
}

/** Rule AUTH-single-header: two Authorization fields are no credential (401), not the first one winning. */
export function authorizationHeader(req: AnyRequest): string | undefined {
  const values = fieldValues(req, 'authorization');
  return values.length === 1 ? values[0] : undefined;
}

/** Rule HTTP-host-header (RFC 9112 §3.2): 400 for HTTP/1.1 without Host or any HTTP/1 with two; HTTP/2 has :authority. */
export function checkHostHeader(req: AnyRequest): void {
  if (req.httpVersionMajor !== 1) return;
  const count = fieldValues(req, 'host').length;
  if (count > 1 || (count === 0 && req.httpVersionMinor >= 1)) throw new ErrBadHostHeader();
}

/**
 * What an operation is handed, from any framework: `body` when a step before already read it. The client key
 * is the TCP peer, as the rate limiter keys (rule LOGIN-gate-fair; X-Forwarded-For untrusted, spec 4.3 rule 4).
 */
export function restRequest(
  req: AnyRequest,
  params: RestRequest['params'],
  query: URLSearchParams,
  signal: AbortSignal,
  body?: string,
): RestRequest {
  const client = req.socket.remoteAddress ?? 'unknown';
  return {
    params,
    query,
    signal,
    headers: req.headers,
    client,
    readBody: () => (body === undefined ? readBody(req) : Promise.resolve(body)),
  };
}

/**
 * A request's done signal (spec 3.2 rule 2): it aborts when the response closes, answered or abandoned, so a
 * session lease the handler forgot is released then, and a holder reading `signal.aborted` later sees it over.
 */
export function requestDoneSignal(res: ServerResponse | Http2ServerResponse): AbortSignal {
  const done = new AbortController();
  res.once('close', () => done.abort(REQUEST_ENDED));
  return done.signal;
}
