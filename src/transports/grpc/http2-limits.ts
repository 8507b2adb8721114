import { constants as h2, type ServerOptions, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { REQUEST_TIMEOUT_MS } from '../http/server-timeouts.ts';

/**
 * Our choices for the one-port listener's HTTP/2 (spec 8: limits not shown; rules H2-limits,
 * H2-stream-deadline, H2-rapid-reset, H2-idle in spec/rules.yaml).
 */

/** SETTINGS_MAX_CONCURRENT_STREAMS: a client queues beyond this instead of tearing the session down. */
export const HTTP2_MAX_CONCURRENT_STREAMS = 128;
/** SETTINGS_MAX_HEADER_LIST_SIZE: the same 16 KiB as Node's HTTP/1.1 header limit. */
export const HTTP2_MAX_HEADER_LIST_BYTES = 16 * 1024;
/** A stream's client must have sent its whole request (END_STREAM) by then, or the stream is reset. */
export const HTTP2_STREAM_REQUEST_TIMEOUT_MS = REQUEST_TIMEOUT_MS;
/**
 * A session with no open stream is closed (GOAWAY) after this long without opening one, whatever
 * else it sends: PINGs, SETTINGS and a header block trickled frame by frame do not keep it alive.
 */
export const HTTP2_IDLE_TIMEOUT_MS = 60_000;
/** Client resets tolerated before the reset-to-completion ratio is looked at. */
export const HTTP2_RESET_ALLOWANCE = 64;

export const HTTP2_SERVER_OPTIONS: ServerOptions = {
  settings: { maxConcurrentStreams: HTTP2_MAX_CONCURRENT_STREAMS, maxHeaderListSize: HTTP2_MAX_HEADER_LIST_BYTES },
  maxSendHeaderBlockLength: HTTP2_MAX_HEADER_LIST_BYTES,
};

export interface SessionGuardOptions {
  readonly idleMs?: number;
  readonly streamRequestMs?: number;
}

/**
 * Enforces the per-session and per-stream limits that node:http2 has no option for:
 * - the request deadline of each stream (like the HTTP/1.1 requestTimeout): a client still sending
 *   after it gets RST_STREAM(CANCEL), so 100 trickling streams cannot hold the session;
 * - the stream-less idle deadline above;
 * - rapid reset (CVE-2023-44487): a client that resets more streams than it lets complete, past the
 *   allowance, gets GOAWAY(ENHANCE_YOUR_CALM) and its connection is closed, which also ends every call
 *   it still had in flight (their done signals abort), so its backlog does not outlive it.
 */
export function guardSession(session: ServerHttp2Session, options: SessionGuardOptions = {}): void {
  const idleMs = options.idleMs ?? HTTP2_IDLE_TIMEOUT_MS;
  const streamRequestMs = options.streamRequestMs ?? HTTP2_STREAM_REQUEST_TIMEOUT_MS;
  let open = 0;
  let resets = 0;
  let completed = 0;
  let idle: NodeJS.Timeout | undefined;
  const armIdle = (): void => {
    idle = setTimeout(() => session.close(), idleMs);
  };
  armIdle();
  session.once('close', () => clearTimeout(idle));

  session.on('stream', (stream: ServerHttp2Stream) => {
    open += 1;
    clearTimeout(idle);
    let timedOut = false;
    const deadline = setTimeout(() => {
      // END_STREAM received: what remains is ours to answer, not the client's to send.
      if (stream.state.remoteClose) return;
      timedOut = true;
      stream.close(h2.NGHTTP2_CANCEL);
    }, streamRequestMs);
    stream.once('close', () => {
      clearTimeout(deadline);
      open -= 1;
      if (open === 0 && !session.closed && !session.destroyed) armIdle();
      if (timedOut || stream.rstCode === h2.NGHTTP2_NO_ERROR || stream.rstCode === undefined) completed += 1;
      else resets += 1;
      if (resets > HTTP2_RESET_ALLOWANCE && resets > completed && !session.destroyed) {
        session.goaway(h2.NGHTTP2_ENHANCE_YOUR_CALM);
        session.destroy();
      }
    });
  });
}
