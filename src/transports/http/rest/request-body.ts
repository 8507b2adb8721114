import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { ErrBodyTooLarge, ErrClientClosed, ErrUnsupportedMediaType } from '../../errors/table.ts';

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

/** Reads a JSON request body as UTF-8, refusing more than MAX_BODY_BYTES without buffering the rest. */
export async function readBody(req: IncomingMessage | Http2ServerRequest, limit = MAX_BODY_BYTES): Promise<string> {
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
