import { constants as h2, type ServerOptions, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { REQUEST_TIMEOUT_MS } from '../http/server/timeouts.ts';

/**
 * Our choices for the one-port listener's HTTP/2 (spec 8: limits not shown; rules H2-limits,
 * H2-stream-deadline, H2-rapid-reset, H2-idle, H2-stream-slot, H2-write-budget and H2-header-refusals
 * in spec/rules.yaml).
 */

/**
 * SETTINGS_MAX_CONCURRENT_STREAMS: a client queues beyond this instead of tearing the session down.
 * Each waiting stream holds ~7 KB (measured), so this bounds what a connection costs (rule H2-limits).
 */
export const HTTP2_MAX_CONCURRENT_STREAMS = 32;
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
/**
 * Header blocks Node refused (over SETTINGS_MAX_HEADER_LIST_SIZE, or too many fields, or past
 * SETTINGS_MAX_CONCURRENT_STREAMS) tolerated on one session: the next costs the client its connection.
 * No well-behaved client sends one; one is allowed for a client that opened streams before our SETTINGS
 * arrived. Node refuses such a block with RST_STREAM but
 * must still decode all of it to keep HPACK in step, and a block of 10,000 references to one 4 KB
 * table entry costs ~150 µs to decode while it costs its sender 10 KB: without this a few connections
 * kept a core busy (rule H2-header-refusals).
 */
export const HTTP2_REFUSED_HEADER_BLOCKS = 1;
/**
 * Answers queued on one session that its client has not taken (a zero flow-control window, or a socket
 * it does not read). Above the soft bound new streams are refused with REFUSED_STREAM (nothing was
 * processed, so any client may retry them); above the hard bound the session is closed. Measured: 150
 * zero-window connections asking 128 answers of ~25 KB each grew the process by ~860 MB without these
 * (rule H2-write-budget).
 */
// Above the largest answer the service sends at once (the docs page's 1.4 MB script bundle, a shared
// Buffer that queues without being copied): 1 MiB closed sessions that were reading it.
export const HTTP2_SESSION_QUEUED_SOFT_BYTES = 2 * 1024 * 1024;
export const HTTP2_SESSION_QUEUED_HARD_BYTES = 4 * 1024 * 1024;
/** A session with an answer its client has not taken within this is closed: its buffers go. */
export const HTTP2_STREAM_WRITE_TIMEOUT_MS = 10_000;
/**
 * Streams of one session whose handler runs or whose answer its client has not taken yet: the next
 * waits, in order, until one of them is done; the stream slots above bound how many wait. All of a
 * burst's answers were made before any look at the session could see them: 150 zero-window
 * connections grew the process by 320 MB with 128 slots and 16 running, 159 MB with 32 and 8 (rule
 * H2-write-budget).
 */
export const HTTP2_ACTIVE_STREAMS = 8;
/** How often sessions are looked at for refused header blocks and queued answers. */
export const HTTP2_GUARD_TICK_MS = 10;

/**
 * Node's own HTTP/2 options, next to the guard below: what each does for us, and why the guard still
 * does the rest (each tried against the conformance attack cases):
 * - settings.maxConcurrentStreams, settings.maxHeaderListSize, maxSendHeaderBlockLength: set here.
 * - streamResetBurst / streamResetRate (nghttp2's reset rate limit): left at Node's 1,000 / 33 per s, a
 *   backstop. Set to 64 / 32 in place of the guard's reset count, it cut the rapid-reset case's
 *   connections after ~300 resets with GOAWAY INTERNAL_ERROR, left the connection open and its calls
 *   running; the guard answers ENHANCE_YOUR_CALM, closes the connection (ending its calls) and counts
 *   resets against completed streams, so a client that cancels some calls is not cut (rule H2-rapid-reset).
 * - maxSessionRejectedStreams (100): counts streams refused past SETTINGS_MAX_CONCURRENT_STREAMS or the
 *   session memory, not header blocks refused for their size, which is what an HPACK bomb sends: the
 *   guard's refused-block count covers both (rule H2-header-refusals).
 * - maxSessionMemory (10 MB): counts what nghttp2 holds, not answers queued in a stream's writable
 *   buffer for a client whose window is shut: the guard's write budget (rule H2-write-budget).
 * - Http2Session/Http2Stream setTimeout: inactivity timers that any PING or trickled frame refreshes:
 *   the guard's idle and request deadlines (rules H2-idle, H2-stream-deadline).
 * - maxSessionInvalidFrames (1,000), maxHeaderListPairs (128), maxOutstandingPings (10), maxSettings (32),
 *   unknownProtocolTimeout (10 s): Node's defaults, kept.
 */
export const HTTP2_SERVER_OPTIONS: ServerOptions = {
  settings: { maxConcurrentStreams: HTTP2_MAX_CONCURRENT_STREAMS, maxHeaderListSize: HTTP2_MAX_HEADER_LIST_BYTES },
  maxSendHeaderBlockLength: HTTP2_MAX_HEADER_LIST_BYTES,
};

export interface SessionGuardOptions {
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
  /**
   * When each stream's answer started waiting for its client (absent while nothing waits). Weak: the
   * entry of a stream that closes while its answer waits goes with the stream.
   */
  readonly waitingSince: WeakMap<ServerHttp2Stream, number>;
  overSoft: boolean;
  readonly limits: Required<SessionGuardOptions>;
  /** Streams dispatched and not done (answer taken, or closed). */
  active: number;
  /** Dispatches waiting for an active stream to be done. */
  readonly pending: Array<() => void>;
}

const watched = new Map<ServerHttp2Session, Watch>();
/** Streams this guard reset itself: they count as completed, not as the client's resets. */
const resetByUs = new WeakSet<ServerHttp2Stream>();
let ticker: NodeJS.Timeout | undefined;

/** GOAWAY(ENHANCE_YOUR_CALM) and the connection closed: every stream it held ends, its buffers go. */
function calm(session: ServerHttp2Session): void {
  // One GOAWAY with this code (goaway() then destroy() sent a second one, with NO_ERROR); destroy() does
  // nothing to a session destroyed already. The error goes to the server's 'sessionError', which nothing
  // here listens to.
  session.destroy(new Error('http2: session closed for abuse'), h2.NGHTTP2_ENHANCE_YOUR_CALM);
}

/** RST_STREAM with `code` now, whatever is queued: a code other than NO_ERROR also frees its slot at once. */
function resetStream(stream: ServerHttp2Stream, code: number): void {
  // Closed already (a destroyed stream is closed too): by its client's own reset, which stays the client's.
  if (stream.closed) return;
  resetByUs.add(stream);
  stream.close(code);
}

/**
 * Once our answer is complete, a request the client is still sending is asked to stop with
 * RST_STREAM(NO_ERROR) (RFC 9113 section 8.1), then what it had buffered is read and dropped. Node
 * destroys a stream reset with NO_ERROR, and frees its slot of SETTINGS_MAX_CONCURRENT_STREAMS, only
 * once its request side is read to the end: a request left paused (refused before it was read) kept
 * its slot forever, and 128 refused Logins pinned a connection (rule H2-stream-slot). The reset goes
 * first so that reading the buffered bytes does not reopen the stream's flow-control window: DATA
 * reaching a reset stream counts as an invalid frame, and Node closes a session after 1,000.
 */
function endUnreadRequest(stream: ServerHttp2Stream): void {
  if (stream.destroyed || stream.endAfterHeaders || stream.readableEnded) return;
  resetByUs.add(stream);
  // Does nothing if closed already (a gRPC refusal closes with NO_ERROR): its RST goes out later in this
  // same 'finish'.
  stream.close(h2.NGHTTP2_NO_ERROR);
  setImmediate(() => {
    // Whoever read the request (the compatibility layer's request object) has no use for the rest,
    // and would pause the stream again once its own buffer is full.
    stream.removeAllListeners('data');
    stream.resume();
  });
}

/** Bytes written to the stream that its client has not taken yet. */
function queuedBytes(stream: ServerHttp2Stream): number {
  return stream.writableLength + (stream.writableEnded && !stream.writableFinished ? 1 : 0);
}

function look(session: ServerHttp2Session, watch: Watch, now: number): void {
  if (session.destroyed) return;
  // Client stream ids are odd and rise: those that never reached us were refused by Node.
  const processed = session.state.lastProcStreamID ?? 0;
  if ((processed + 1) / 2 - watch.seen > HTTP2_REFUSED_HEADER_BLOCKS) return calm(session);
  // Looked at with no stream too: once every stream that held an answer is gone, nothing waits and new
  // streams are served again.
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
    // A client that leaves an answer untaken this long is not reading: its connection goes, with
    // every answer it holds (resetting only the stream let the next ones be made, and held, in turn).
    else if (now - since >= watch.limits.streamWriteMs) return calm(session);
  }
  if (queued > watch.limits.queuedHardBytes) return calm(session);
  watch.overSoft = queued > watch.limits.queuedSoftBytes;
}

function runTicker(): void {
  const now = Date.now();
  for (const [session, watch] of watched) look(session, watch, now);
}

function watchSession(session: ServerHttp2Session, watch: Watch): void {
  watched.set(session, watch);
  if (ticker === undefined) {
    ticker = setInterval(runTicker, HTTP2_GUARD_TICK_MS);
    ticker.unref();
  }
  session.once('close', () => {
    watched.delete(session);
    // The last watched session's close: the ticker was started with the first one after the last stop.
    if (watched.size === 0) {
      clearInterval(ticker);
      ticker = undefined;
    }
  });
}

/**
 * Runs `handle` for a stream of a guarded session when fewer than HTTP2_ACTIVE_STREAMS of its streams
 * are active, else once one is done; a stream closed meanwhile (reset by its client) is skipped.
 */
export function dispatchGuarded(stream: ServerHttp2Stream, handle: () => void): void {
  const watch = watched.get(stream.session as ServerHttp2Session);
  if (watch === undefined) return handle();
  const run = (): void => {
    // Gone: reset by its client, or with its connection (destroying a session destroys its streams at once,
    // and a destroyed stream is closed), or closed and still draining its request.
    if (stream.closed) return next(watch);
    watch.active += 1;
    const finish = (): void => {
      watch.active -= 1;
      next(watch);
    };
    // Done when closed: answered and taken by the client, reset, or gone with its connection.
    stream.once('close', finish);
    handle();
  };
  if (watch.active < watch.limits.activeStreams) run();
  else watch.pending.push(run);
}

/** A slot is free: streams wait only while every slot is taken, and each done or skipped stream frees one. */
function next(watch: Watch): void {
  watch.pending.shift()?.();
}

/**
 * Enforces the per-session and per-stream limits that node:http2 has no option for:
 * - the request deadline of each stream (like the HTTP/1.1 requestTimeout): a client still sending
 *   after it gets RST_STREAM(CANCEL), so 100 trickling streams cannot hold the session;
 * - the stream-less idle deadline above;
 * - rapid reset (CVE-2023-44487): a client that resets more streams than it lets complete, past the
 *   allowance, gets GOAWAY(ENHANCE_YOUR_CALM) and its connection is closed, which also ends every call
 *   it still had in flight (their done signals abort), so its backlog does not outlive it;
 * - a stream answered before its request was read (refused, unauthenticated, past its deadline) is
 *   reset with NO_ERROR once answered, which frees its slot;
 * - header blocks refused by Node, answers nobody takes: the write budget and deadline above.
 */
export function guardSession(session: ServerHttp2Session, options: SessionGuardOptions = {}): void {
  const limits: Required<SessionGuardOptions> = {
    idleMs: options.idleMs ?? HTTP2_IDLE_TIMEOUT_MS,
    streamRequestMs: options.streamRequestMs ?? HTTP2_STREAM_REQUEST_TIMEOUT_MS,
    streamWriteMs: options.streamWriteMs ?? HTTP2_STREAM_WRITE_TIMEOUT_MS,
    queuedSoftBytes: options.queuedSoftBytes ?? HTTP2_SESSION_QUEUED_SOFT_BYTES,
    queuedHardBytes: options.queuedHardBytes ?? HTTP2_SESSION_QUEUED_HARD_BYTES,
    activeStreams: options.activeStreams ?? HTTP2_ACTIVE_STREAMS,
  };
  const watch: Watch = {
    seen: 0,
    streams: new Set(),
    waitingSince: new WeakMap(),
    overSoft: false,
    limits,
    active: 0,
    pending: [],
  };
  watchSession(session, watch);
  let resets = 0;
  let completed = 0;
  let idle: NodeJS.Timeout | undefined;
  const armIdle = (): void => {
    idle = setTimeout(() => session.close(), limits.idleMs);
  };
  armIdle();
  session.once('close', () => clearTimeout(idle));
  // Header blocks sent with the preface were decoded before this session reached us: look at once,
  // before the socket's next read brings a batch (rule H2-header-refusals).
  setImmediate(() => look(session, watch, Date.now()));

  session.on('stream', (stream: ServerHttp2Stream) => {
    watch.seen += 1;
    watch.streams.add(stream);
    clearTimeout(idle);
    if (watch.overSoft) {
      // Nothing of it was processed: any client may send it again (RFC 9113 section 8.7).
      resetStream(stream, h2.NGHTTP2_REFUSED_STREAM);
    }
    stream.once('finish', () => endUnreadRequest(stream));
    const deadline = setTimeout(() => {
      // END_STREAM received: what remains is ours to answer, not the client's to send.
      if (stream.state.remoteClose) return;
      resetStream(stream, h2.NGHTTP2_CANCEL);
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
