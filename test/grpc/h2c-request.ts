import { connect, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';

export interface H2Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly trailers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** One request over cleartext HTTP/2 with prior knowledge (h2c, no upgrade), on its own connection. */
export function h2cRequest(origin: string, headers: OutgoingHttpHeaders, body?: Buffer | string): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    session.once('error', reject);
    const stream = session.request(headers);
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.once('response', (h) => (responseHeaders = h));
    stream.once('trailers', (t) => (trailers = t));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('error', reject);
    stream.once('end', () => {
      session.close();
      resolve({ status: Number(responseHeaders[':status']), headers: responseHeaders, trailers, body: Buffer.concat(chunks) });
    });
    stream.end(body);
  });
}
