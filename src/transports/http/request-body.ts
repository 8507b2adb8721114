import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { ErrBodyTooLarge, ErrClientClosed } from './http-errors.ts';

/** Our choice for "request body size limit: not shown" (spec 8). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads a request body as UTF-8, refusing more than MAX_BODY_BYTES without buffering the rest. */
export async function readBody(req: IncomingMessage | Http2ServerRequest, limit = MAX_BODY_BYTES): Promise<string> {
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
