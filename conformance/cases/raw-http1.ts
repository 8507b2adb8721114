import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Reply } from '../drivers/driver.ts';
import { restReply } from '../drivers/rest-reply.ts';
import { HANG_GUARD_MS } from '../../test/support/eventually.ts';

/** What came back on a hand-written HTTP/1.1 connection, and when (from connect) it came. */
export interface RawAnswer {
  readonly reply: Reply;
  readonly elapsedMs: number;
}

export interface RawOptions {
  /** Sent every `dripEveryMs` (a second by default) after `head`, until the server answers (slow clients). */
  readonly drip?: () => string;
  readonly dripEveryMs?: number;
  /** Give up (reject) after this long without an answer: a hang guard (HANG_GUARD_MS by default). */
  readonly timeoutMs?: number;
}

/**
 * `send`, with a 429 of the rate limiter waited out (Retry-After) and sent again, up to 10 times: an
 * external target keeps its own RATE_LIMIT_RPS, and a case not about rate limiting must not fail on one
 * (the drivers' retryRateLimited does the same for driver requests).
 */
export async function pastRateLimit<T extends { readonly reply: Reply }>(send: () => Promise<T>): Promise<T> {
  let answer = await send();
  for (let attempt = 0; answer.reply.status === 429 && attempt < 10; attempt++) {
    await sleep(Math.max(1, Number(answer.reply.headers?.['retry-after']) || 1) * 1000);
    answer = await send();
  }
  return answer;
}

/** rawHttp1 past the rate limit (pastRateLimit). */
export function rawHttp1PastRateLimit(baseUrl: string, head: string | Buffer): Promise<RawAnswer> {
  return pastRateLimit(() => rawHttp1(baseUrl, head));
}

/**
 * Bytes no HTTP client library sends (repeated singleton headers, broken framing, a slowloris drip)
 * written on a TCP socket to the public listener, and the first response read back (by
 * Content-Length, or up to the close).
 */
export function rawHttp1(baseUrl: string, head: string | Buffer, options: RawOptions = {}): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    let received = Buffer.alloc(0);
    let settled = false;
    let drip: NodeJS.Timeout | undefined;
    const timeoutMs = options.timeoutMs ?? HANG_GUARD_MS;
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(drip);
      socket.destroy();
      if (error !== undefined) return reject(error);
      const parsed = parse(received, true);
      if (parsed === undefined)
        return reject(
          new Error(
            `connection closed without a response (${received.length} bytes: ${JSON.stringify(received.toString('latin1').slice(0, 80))})`,
          ),
        );
      resolve({ reply: parsed, elapsedMs: performance.now() - started });
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (parse(received, false) !== undefined) finish();
    });
    socket.on('error', () => finish());
    socket.on('close', () => finish());
    socket.on('connect', () => {
      socket.write(head);
      if (options.drip !== undefined) {
        const next = options.drip;
        drip = setInterval(() => {
          if (!socket.destroyed && socket.writable) socket.write(next());
        }, options.dripEveryMs ?? 1000);
      }
    });
  });
}

/** The first response in `bytes`, once complete (or whatever arrived, when the peer closed). */
function parse(bytes: Buffer, closed: boolean): Reply | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? NaN);
  const body = bytes.subarray(end + 4);
  const complete = Number.isFinite(length) && body.length >= length;
  if (!complete && !closed) return undefined;
  return restReply(status, headers, (complete ? body.subarray(0, length) : body).toString('utf8'), '1.1');
}

/** What a client that kept sending after the server's closing answer saw (rule HTTP-close-linger). */
export interface KeptSending {
  /** The answer read before the server's FIN. */
  readonly reply: Reply;
  /** Errors on the connection after the answer (a reset shows as EPIPE or ECONNRESET). */
  readonly errors: readonly string[];
}

/**
 * Writes `head` (a request declaring a body the server refuses unread) and its first KiB, reads the
 * answer up to the server's FIN, then goes on sending `moreBytes` of the body, as a client whose upload
 * was already under way does, and closes its side.
 */
export function keepSendingAfterAnswer(baseUrl: string, head: string, moreBytes: number, timeoutMs = HANG_GUARD_MS): Promise<KeptSending> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
    const timer = setTimeout(() => socket.destroy(new Error(`no close within ${timeoutMs} ms`)), timeoutMs);
    let received = Buffer.alloc(0);
    let answered = false;
    const errors: string[] = [];
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from(head, 'latin1'), Buffer.alloc(1024, 0x20)])));
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!answered) reject(error);
      else errors.push(error.code ?? error.message);
    });
    socket.on('end', () => {
      answered = true;
      void (async () => {
        for (let sent = 0; sent < moreBytes && !socket.destroyed; sent += 64 * 1024) {
          await new Promise<void>((written) => socket.write(Buffer.alloc(64 * 1024, 0x20), () => written()));
        }
        if (!socket.destroyed) socket.end();
      })();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const reply = parse(received, true);
      if (!answered || reply === undefined) return reject(new Error(`no answer before the close (${received.length} bytes)`));
      resolve({ reply, errors });
    });
  });
}

/** Every response on one hand-written HTTP/1.1 connection, in order, read up to the server's close. */
export function rawHttp1Responses(baseUrl: string, bytes: string | Buffer, timeoutMs = HANG_GUARD_MS): Promise<Reply[]> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(new Error(`no close within ${timeoutMs} ms`)), timeoutMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const replies: Reply[] = [];
      let rest = received;
      for (let reply = parse(rest, true); reply !== undefined && rest.length > 0; reply = parse(rest, true)) {
        replies.push(reply);
        const end = rest.indexOf('\r\n\r\n') + 4;
        rest = rest.subarray(end + Buffer.byteLength(reply.text ?? '', 'utf8'));
      }
      resolve(replies);
    });
  });
}
