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
 * Our choice: during a stop, a keep-alive connection is closed once it carried no request for this long.
 * HTTP/1.1 cannot tell an idle client to go away, and closing the moment it goes idle races its next request
 * (each busy client saw one ECONNRESET); a busy client asks well within this and gets `Connection: close`.
 */
export const SHUTDOWN_IDLE_QUIET_MS = 500;

const SWEEP_MS = 50;

interface ConnectionState {
  /** Responses of requests read on this connection and not finished yet, oldest first. */
  readonly open: ServerResponse[];
  /** When the connection was accepted or last finished a response. */
  lastActive: number;
}

interface Tracker {
  readonly connections: Map<Socket, ConnectionState>;
  closing: boolean;
}

const trackers = new WeakMap<Server, Tracker>();

/** Call before the server takes a connection: drainHttp1/closeHttpServer need its connections and requests. */
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
 * The graceful stop once the listening socket no longer accepts: every response not yet started says
 * `Connection: close`; in-flight requests complete; a connection quiet for SHUTDOWN_IDLE_QUIET_MS (a request
 * still arriving byte by byte counts as none) is closed; what is left after the grace is cut.
 */
export async function drainHttp1(server: Server, graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
  const tracker = trackers.get(server);
  if (tracker === undefined) throw new Error('drainHttp1: the server was not passed to trackConnections when it was created');
  tracker.closing = true;
  // Node reads shouldKeepAlive while it builds the head: a response under way is unchanged.
  for (const { open } of tracker.connections.values()) for (const res of open) res.shouldKeepAlive = false;
  const deadline = Date.now() + graceMs;
  while (tracker.connections.size > 0) {
    // After the poll phase (setImmediate): a request that arrived while this process stalled is read and
    // counted by then, so a stall never passes for a quiet client.
    await new Promise((resolve) => setImmediate(resolve));
    const now = Date.now();
    for (const [socket, state] of tracker.connections) {
      if (now >= deadline || (state.open.length === 0 && now - state.lastActive >= SHUTDOWN_IDLE_QUIET_MS)) socket.destroy();
    }
    if (tracker.connections.size === 0) break;
    await new Promise((resolve) => setTimeout(resolve, SWEEP_MS));
  }
}

/** Stop accepting, then drain. */
export async function closeHttpServer(server: Server, graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
  // http.Server#close also destroys idle keep-alive connections at once, the race drainHttp1 avoids: while
  // it runs, closeIdleConnections is shadowed so close only stops accepting (and its timer).
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
