import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { ErrBadHostHeader } from '../../errors/table.ts';

type AnyRequest = IncomingMessage | Http2ServerRequest;

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
