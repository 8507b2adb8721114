/**
 * The HTTP/2 limits of the one-port listener: Node's own server options, and a session guard for what Node
 * has no option for (rules H2-limits, H2-stream-deadline, H2-idle, H2-rapid-reset, H2-stream-slot,
 * H2-write-budget, H2-header-refusals; their measured reasons are in this package's README.md, "Limits, and why").
 */
import { constants as h2, type ServerOptions, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';

/** SETTINGS_MAX_CONCURRENT_STREAMS: a client queues beyond it; each waiting stream holds ~7 KB. */
export const HTTP2_MAX_CONCURRENT_STREAMS = 32;
/** SETTINGS_MAX_HEADER_LIST_SIZE: the same 16 KiB as Node's HTTP/1.1 header limit. */
export const HTTP2_MAX_HEADER_LIST_BYTES = 16 * 1024;
/** A stream's client must have sent its whole request (END_STREAM) by then, or the stream is reset. */
export const HTTP2_STREAM_REQUEST_TIMEOUT_MS = 30_000;
/** A session with no open stream is closed after this long, whatever else it sends (PINGs, trickled frames). */
export const HTTP2_IDLE_TIMEOUT_MS = 60_000;
/** Client resets tolerated before the reset-to-completion ratio is looked at. */
export const HTTP2_RESET_ALLOWANCE = 64;
/**
 * Header blocks Node refused tolerated on one session (one: a client may open streams before our SETTINGS
 * arrive); Node must still decode a refused block to keep HPACK in step, so a flood of them keeps a core busy.
 */
export const HTTP2_REFUSED_HEADER_BLOCKS = 1;
/**
 * Answers queued on one session that its client has not taken: above the soft bound new streams are refused
 * (REFUSED_STREAM, safe to retry), above the hard bound the session is closed. The soft bound is above the
 * largest answer sent at once (the docs page's 1.4 MB script bundle).
 */
export const HTTP2_SESSION_QUEUED_SOFT_BYTES = 2 * 1024 * 1024;
export const HTTP2_SESSION_QUEUED_HARD_BYTES = 4 * 1024 * 1024;
/** A session with an answer its client has not taken within this is closed: its buffers go. */
export const HTTP2_STREAM_WRITE_TIMEOUT_MS = 10_000;
/** Streams of a session whose handler runs or whose answer waits for its client; the next waits, in order. */
export const HTTP2_ACTIVE_STREAMS = 8;
/** How often sessions are looked at for refused header blocks and queued answers. */
export const HTTP2_GUARD_TICK_MS = 10;

/**
 * Node's own options. Kept at Node's defaults, each short of what the guard does: streamResetBurst/Rate (a
 * backstop; set low it cut connections with INTERNAL_ERROR and left their calls running),
 * maxSessionRejectedStreams (does not count header blocks refused for their size), maxSessionMemory (does
 * not count answers queued for a shut window), stream and session setTimeout (any PING refreshes them),
 * maxSessionInvalidFrames, maxHeaderListPairs, maxOutstandingPings, maxSettings, unknownProtocolTimeout.
 */
export const HTTP2_SERVER_OPTIONS: ServerOptions = {
  settings: { maxConcurrentStreams: HTTP2_MAX_CONCURRENT_STREAMS, maxHeaderListSize: HTTP2_MAX_HEADER_LIST_BYTES },
  maxSendHeaderBlockLength: HTTP2_MAX_HEADER_LIST_BYTES,
};

/** The guard's limits; each defaults to the constant above of the same meaning. Tests pass shorter ones. */
export interface Http2Limits {
  readonly idleMs?: number;
  readonly streamRequestMs?: number;
  readonly streamWriteMs?: number;
  readonly queuedSoftBytes?: number;
  readonly queuedHardBytes?: number;
  readonly activeStreams?: number;
}

/** What the shared ticker looks at, per guarded session. */
interface Watch {
  /** Client streams that reached our 'stream' handler (the others were refused by Node). */
  seen: number;
  readonly streams: Set<ServerHttp2Stream>;
  /** When each stream's answer started waiting for its client. */
  readonly waitingSince: WeakMap<ServerHttp2Stream, number>;
  overSoft: boolean;
  readonly limits: Required<Http2Limits>;
  /** Streams dispatched and not done (answer taken, or closed), and the dispatches waiting for one to be done. */
  active: number;
  readonly pending: Array<() => void>;
}

const watched = new Map<ServerHttp2Session, Watch>();
/** Streams this guard reset itself: they count as completed, not as the client's resets. */
const resetByUs = new WeakSet<ServerHttp2Stream>();
let ticker: NodeJS.Timeout | undefined;

/** GOAWAY(ENHANCE_YOUR_CALM) and the connection closed: every stream it held ends, its buffers go. */
function calm(session: ServerHttp2Session): void {
  // One GOAWAY with this code (goaway() then destroy() sent a second, NO_ERROR one); a no-op once destroyed.
  session.destroy(new Error('http2: session closed for abuse'), h2.NGHTTP2_ENHANCE_YOUR_CALM);
}

/** RST_STREAM with `code` now, unless the client's own reset closed it already (that one stays the client's). */
function resetStream(stream: ServerHttp2Stream, code: number): void {
  if (stream.closed) return;
  resetByUs.add(stream);
  stream.close(code);
}

/**
 * Once our answer is complete, a request the client is still sending gets RST_STREAM(NO_ERROR) (RFC 9113
 * section 8.1) and what it had buffered is read and dropped: Node frees the stream's slot only once its
 * request side is read to the end (rule H2-stream-slot). The reset goes first, so reading does not reopen
 * the flow-control window: DATA reaching a reset stream counts as an invalid frame.
 */
function endUnreadRequest(stream: ServerHttp2Stream): void {
  if (stream.destroyed || stream.endAfterHeaders || stream.readableEnded) return;
  resetByUs.add(stream);
  // A no-op if closed already (a gRPC refusal closes with NO_ERROR): its RST goes out later in this 'finish'.
  stream.close(h2.NGHTTP2_NO_ERROR);
  setImmediate(() => {
    // Whoever read the request has no use for the rest, and would pause the stream again once its buffer is full.
    stream.removeAllListeners('data');
    stream.resume();
  });
}

/** Bytes written to the stream that its client has not taken yet (an ended, unflushed answer counts one). */
function queuedBytes(stream: ServerHttp2Stream): number {
  return stream.writableLength + (stream.writableEnded && !stream.writableFinished ? 1 : 0);
}

function look(session: ServerHttp2Session, watch: Watch, now: number): void {
  if (session.destroyed) return;
  // Client stream ids are odd and rise: those that never reached us were refused by Node.
  const processed = session.state.lastProcStreamID ?? 0;
  if ((processed + 1) / 2 - watch.seen > HTTP2_REFUSED_HEADER_BLOCKS) return calm(session);
  // Looked at with no stream too: once every stream that held an answer is gone, new streams are served again.
  let queued = 0;
  for (const stream of watch.streams) {
    const bytes = queuedBytes(stream);
    queued += bytes;
    if (bytes === 0) {
      watch.waitingSince.delete(stream);
      continue;
    }
    const since = watch.waitingSince.get(stream);
    if (since === undefined) watch.waitingSince.set(stream, now);
    // Not reading: the whole connection goes (resetting only the stream let the next answers be made and held).
    else if (now - since >= watch.limits.streamWriteMs) return calm(session);
  }
  if (queued > watch.limits.queuedHardBytes) return calm(session);
  watch.overSoft = queued > watch.limits.queuedSoftBytes;
}

/** One ticker for every guarded session, running while there is one. */
function watchSession(session: ServerHttp2Session, watch: Watch): void {
  watched.set(session, watch);
  if (ticker === undefined) {
    ticker = setInterval(() => {
      const now = Date.now();
      for (const [each, itsWatch] of watched) look(each, itsWatch, now);
    }, HTTP2_GUARD_TICK_MS);
    ticker.unref();
  }
  session.once('close', () => {
    watched.delete(session);
    if (watched.size === 0) {
      clearInterval(ticker);
      ticker = undefined;
    }
  });
}

/**
 * Runs `handle` for a stream of a guarded session when fewer than activeStreams of its streams are active,
 * else once one is done (rule H2-write-budget); a stream closed meanwhile (reset by its client) is skipped.
 */
export function dispatchGuarded(stream: ServerHttp2Stream, handle: () => void): void {
  const watch = watched.get(stream.session as ServerHttp2Session);
  if (watch === undefined) return handle();
  const next = (): void => watch.pending.shift()?.();
  const run = (): void => {
    // Gone: reset by its client, or with its connection (a destroyed stream is closed too).
    if (stream.closed) return next();
    watch.active += 1;
    // Done when closed: answered and taken by the client, reset, or gone with its connection.
    stream.once('close', () => {
      watch.active -= 1;
      next();
    });
    handle();
  };
  if (watch.active < watch.limits.activeStreams) run();
  else watch.pending.push(run);
}

/**
 * Enforces on one session what node:http2 has no option for: each stream's request deadline (RST_STREAM
 * CANCEL, like HTTP/1.1's requestTimeout), the stream-less idle deadline, rapid reset (CVE-2023-44487: more
 * resets than completed streams past the allowance cost the connection, and so every call it had in
 * flight), the slot of a stream answered before its request was read, refused header blocks, and the write
 * budget and deadline of answers nobody takes.
 */
export function guardSession(session: ServerHttp2Session, options: Http2Limits = {}): void {
  const limits: Required<Http2Limits> = {
    idleMs: options.idleMs ?? HTTP2_IDLE_TIMEOUT_MS,
    streamRequestMs: options.streamRequestMs ?? HTTP2_STREAM_REQUEST_TIMEOUT_MS,
    streamWriteMs: options.streamWriteMs ?? HTTP2_STREAM_WRITE_TIMEOUT_MS,
    queuedSoftBytes: options.queuedSoftBytes ?? HTTP2_SESSION_QUEUED_SOFT_BYTES,
    queuedHardBytes: options.queuedHardBytes ?? HTTP2_SESSION_QUEUED_HARD_BYTES,
    activeStreams: options.activeStreams ?? HTTP2_ACTIVE_STREAMS,
  };
  const watch: Watch = { seen: 0, streams: new Set(), waitingSince: new WeakMap(), overSoft: false, limits, active: 0, pending: [] };
  watchSession(session, watch);
  let resets = 0;
  let completed = 0;
  let idle: NodeJS.Timeout | undefined;
  const armIdle = (): void => {
    idle = setTimeout(() => session.close(), limits.idleMs);
  };
  armIdle();
  session.once('close', () => clearTimeout(idle));
  // Header blocks sent with the preface were decoded before this session reached us: look before the next read.
  setImmediate(() => look(session, watch, Date.now()));

  session.on('stream', (stream: ServerHttp2Stream) => {
    watch.seen += 1;
    watch.streams.add(stream);
    clearTimeout(idle);
    // Nothing of it was processed: any client may send it again (RFC 9113 section 8.7).
    if (watch.overSoft) resetStream(stream, h2.NGHTTP2_REFUSED_STREAM);
    stream.once('finish', () => endUnreadRequest(stream));
    const deadline = setTimeout(() => {
      // END_STREAM received: what remains is ours to answer, not the client's to send.
      if (!stream.state.remoteClose) resetStream(stream, h2.NGHTTP2_CANCEL);
    }, limits.streamRequestMs);
    stream.once('close', () => {
      clearTimeout(deadline);
      watch.streams.delete(stream);
      if (watch.streams.size === 0 && !session.closed && !session.destroyed) armIdle();
      // rstCode is NO_ERROR until a code closes the stream.
      if (resetByUs.has(stream) || stream.rstCode === h2.NGHTTP2_NO_ERROR) completed += 1;
      else resets += 1;
      if (resets > HTTP2_RESET_ALLOWANCE && resets > completed && !session.destroyed) calm(session);
    });
  });
}
