/**
 * The graceful stop of an HTTP/1.1 server (rule LIFE-4-shutdown): every connection and its requests are
 * tracked from the start, so a stop can tell each client the connection ends, let in-flight requests
 * finish and close idle connections without racing a client's next request.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Our choice: in-flight requests get this long after a stop before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 5_000;

/**
 * Our choice: during a shutdown, a keep-alive connection is closed once it has carried no request for
 * this long. HTTP/1.1 cannot tell an idle client to go away, and closing a connection the moment it goes
 * idle races the client's next request (each busy client saw one ECONNRESET). A client under load sends
 * its next request well within this and is answered with `Connection: close` instead.
 */
export const SHUTDOWN_IDLE_QUIET_MS = 500;

const SWEEP_MS = 50;

interface ConnectionState {
  /** Responses of requests read on this connection and not finished yet, oldest first. */
  readonly open: ServerResponse[];
  /** When the connection was accepted or last finished a response. */
  lastActive: number;
}

/** Per server: its open connections, each with its own responses, and whether a stop has begun. */
interface Tracker {
  readonly connections: Map<Socket, ConnectionState>;
  closing: boolean;
}

const trackers = new WeakMap<Server, Tracker>();

/**
 * Call once, right after creating an HTTP/1.1 server and before it takes a connection: from then on its
 * connections and requests are tracked, so that drainHttp1/closeHttpServer can close it without resets.
 */
export function trackConnections(server: Server): void {
  if (trackers.has(server)) return;
  const tracker: Tracker = { connections: new Map(), closing: false };
  trackers.set(server, tracker);
  server.on('connection', (socket: Socket) => {
    tracker.connections.set(socket, { open: [], lastActive: Date.now() });
    socket.once('close', () => tracker.connections.delete(socket));
  });
  // Prepended: the app's own 'request' listener may write the head synchronously.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (tracker.closing) res.shouldKeepAlive = false;
    const state = tracker.connections.get(req.socket);
    if (state === undefined) return;
    state.open.push(res);
    res.once('close', () => {
      state.open.splice(state.open.indexOf(res), 1);
      state.lastActive = Date.now();
    });
  });
}

/**
 * The HTTP/1.1 side of a graceful stop, once the listening socket no longer accepts: every response not
 * yet started says `Connection: close` (the client learns the connection ends, and Node closes it after
 * that response); in-flight requests complete; a connection that has carried no request for
 * SHUTDOWN_IDLE_QUIET_MS (a request still arriving byte by byte counts as none) is closed;
 * whatever is left after the grace is cut. Resolves when no connection is left.
 */
export async function drainHttp1(server: Server, graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
  const tracker = trackers.get(server);
  if (tracker === undefined) throw new Error('drainHttp1: the server was not passed to trackConnections when it was created');
  tracker.closing = true;
  // A response whose head is not written yet becomes the connection's last. Node reads shouldKeepAlive only
  // while it builds the head, so setting it on a response already under way changes nothing.
  for (const { open } of tracker.connections.values()) for (const res of open) res.shouldKeepAlive = false;
  const deadline = Date.now() + graceMs;
  while (tracker.connections.size > 0) {
    // Checked after the event loop's poll phase: a request that reached the socket while this process was
    // stalled has been read (and counted as open) by then, so a stall never passes for a quiet client.
    await afterPendingIo();
    const now = Date.now();
    for (const [socket, state] of tracker.connections) {
      if (now >= deadline || (state.open.length === 0 && now - state.lastActive >= SHUTDOWN_IDLE_QUIET_MS)) socket.destroy();
    }
    if (tracker.connections.size === 0) break;
    await new Promise((resolve) => setTimeout(resolve, SWEEP_MS));
  }
}

/** Stop accepting, then drain (drainHttp1). Resolves when the server is closed. */
export async function closeHttpServer(server: Server, graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
  // http.Server#close also destroys every idle keep-alive connection at once, the race drainHttp1
  // avoids; while it runs, closeIdleConnections is shadowed so close only stops accepting (and its timer).
  const closed = new Promise<void>((resolve) => {
    const cull = Object.getOwnPropertyDescriptor(server, 'closeIdleConnections');
    server.closeIdleConnections = () => undefined;
    try {
      server.close(() => resolve());
    } finally {
      if (cull === undefined) delete (server as { closeIdleConnections?: unknown }).closeIdleConnections;
      else Object.defineProperty(server, 'closeIdleConnections', cull);
    }
  });
  await drainHttp1(server, graceMs);
  await closed;
}

/** Resolves in the check phase of the event loop: after the poll phase has read whatever had arrived. */
export function afterPendingIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
