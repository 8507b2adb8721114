import { connect, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';

/** A gRPC length-prefixed message: flag 0 (or 1 when `compressed`) and the length, around `message`. */
export function grpcFrame(message: Uint8Array, compressed = false): Buffer {
  const header = Buffer.alloc(5);
  header[0] = compressed ? 1 : 0;
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

export interface RawGrpcReply {
  readonly httpStatus: number;
  readonly headers: IncomingHttpHeaders;
  /** From the trailers, or from the headers of a trailers-only answer. */
  readonly grpcStatus: string | undefined;
  readonly grpcMessage: string | undefined;
  readonly body: Buffer;
  /** Bytes the client managed to put on the wire: small when the server never read the body. */
  readonly bytesWritten: number;
}

/**
 * One gRPC call by hand over h2c (prior knowledge), on its own connection, whatever the body: the
 * test side of malformed, oversized and compressed input. Settles when the stream closes.
 */
export function rawGrpc(origin: string, path: string, body: Buffer, headers: OutgoingHttpHeaders = {}): Promise<RawGrpcReply> {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    session.once('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.once('response', (h) => (responseHeaders = h));
    stream.once('trailers', (t) => (trailers = t));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => undefined); // a reset after the answer is the server's right (RFC 9113 8.1)
    stream.once('close', () => {
      const bytesWritten = session.socket?.bytesWritten ?? 0;
      session.destroy();
      const pick = (key: string): string | undefined => (trailers[key] ?? responseHeaders[key]) as string | undefined;
      resolve({
        httpStatus: Number(responseHeaders[':status']),
        headers: responseHeaders,
        grpcStatus: pick('grpc-status'),
        grpcMessage: pick('grpc-message'),
        body: Buffer.concat(chunks),
        bytesWritten,
      });
    });
    // In 16 KiB pieces with backpressure: Node's client would itself reset a stream it was asked to
    // buffer megabytes for (ENHANCE_YOUR_CALM), and what the server never reads must stay unsent.
    let offset = 0;
    const pump = (): void => {
      while (offset < body.length && !stream.closed && !stream.destroyed) {
        const piece = body.subarray(offset, offset + 16_384);
        offset += piece.length;
        if (!stream.write(piece)) return void stream.once('drain', pump);
      }
      if (!stream.closed && !stream.destroyed) stream.end();
    };
    pump();
  });
}
