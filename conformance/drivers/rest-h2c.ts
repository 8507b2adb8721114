import { connect, constants, type ClientHttp2Session } from 'node:http2';
import type { Driver, DriverOptions, RawRequest, Reply } from './driver.ts';
import { restDriver } from './rest-operations.ts';
import { flatHeaders, restReply } from './rest-reply.ts';

const TIMEOUT_MS = 10_000;

/** REST over cleartext HTTP/2 with prior knowledge (spec 4.4 rule 2): one session, many streams. */
export function restH2cDriver(options: DriverOptions): Driver {
  let session: ClientHttp2Session | undefined;
  let ready: Promise<ClientHttp2Session> | undefined;
  // Streams wait for the server's first SETTINGS: opened before it, node does not know the server's
  // SETTINGS_MAX_CONCURRENT_STREAMS yet, and a burst past it is refused (REFUSED_STREAM) instead of queued.
  const open = (): Promise<ClientHttp2Session> => {
    if (ready === undefined || session === undefined || session.closed || session.destroyed) {
      const fresh = connect(options.baseUrl);
      fresh.on('error', () => undefined);
      session = fresh;
      ready = new Promise((resolve, reject) => {
        fresh.once('remoteSettings', () => resolve(fresh));
        fresh.once('close', () => reject(new Error(`${options.baseUrl}: the HTTP/2 session closed before the server's SETTINGS`)));
      });
    }
    return ready;
  };
  const send = async (raw: RawRequest): Promise<Reply> => h2Request(await open(), raw, TIMEOUT_MS);
  return restDriver('rest-h2c', send, options, async () => {
    await new Promise<void>((resolve) => (session === undefined || session.closed ? resolve() : session.close(() => resolve())));
  });
}

/**
 * One stream on an HTTP/2 session as a REST reply; trailers (where gRPC puts its status) are merged into
 * the headers. `timeoutMs`: cancel a stream idle that long (none when omitted: streams queued beyond
 * SETTINGS_MAX_CONCURRENT_STREAMS may wait).
 */
export function h2Request(session: ClientHttp2Session, raw: RawRequest, timeoutMs?: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    // node ends GET/HEAD/DELETE streams at once unless told otherwise; a DELETE may carry a body here.
    const stream = session.request(
      { [constants.HTTP2_HEADER_METHOD]: raw.method, [constants.HTTP2_HEADER_PATH]: raw.path, ...raw.headers },
      { endStream: raw.body === undefined },
    );
    if (timeoutMs !== undefined) stream.setTimeout(timeoutMs, () => stream.close(constants.NGHTTP2_CANCEL));
    let status = 0;
    let headers: Record<string, string> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[constants.HTTP2_HEADER_STATUS]);
      headers = flatHeaders(h);
    });
    stream.on('trailers', (h) => Object.assign(headers, flatHeaders(h)));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(restReply(status, headers, Buffer.concat(chunks).toString('utf8'), '2.0')));
    stream.on('error', (error) =>
      status !== 0 ? resolve(restReply(status, headers, Buffer.concat(chunks).toString('utf8'), '2.0')) : reject(error),
    );
    if (raw.body !== undefined) stream.end(raw.body);
  });
}
