import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Pipelined requests beyond this many waiting on one connection close it: no client we know of
 * pipelines deeper, and one read of 64 KB can hold ~1,000 small requests (rule HTTP1-pipeline-bound).
 */
export const HTTP1_PIPELINE_DEPTH = 32;

/**
 * Runs the requests of one HTTP/1.1 connection one at a time: a pipelined request waits until the
 * answer before it has been handed to the kernel ('finish'); if the connection goes first, it never runs.
 * Node parses every request of a read at once and holds each answer until the ones before it are
 * written, so a client pipelining 10,000 list requests without reading made the server run ~850 of
 * them and hold ~40 MB per connection; with this it holds one answer (rule HTTP1-pipeline-bound).
 */
export function oneRequestAtATime(handler: RequestListener, depth = HTTP1_PIPELINE_DEPTH): RequestListener {
  /** Per connection with a request running: the requests waiting behind it. */
  const waiting = new WeakMap<Socket, Array<() => void>>();
  const run = (socket: Socket, req: IncomingMessage, res: ServerResponse): void => {
    // Written: the next one runs. Closed before that: the connection is gone, and so are they; a response
    // whose head went out still emits 'finish' if its handler ends it after the close, and finds no queue.
    res.once('finish', () => {
      const following = waiting.get(socket)?.shift();
      if (following === undefined) waiting.delete(socket);
      else following();
    });
    res.once('close', () => {
      if (!res.writableFinished) waiting.delete(socket);
    });
    handler(req, res);
  };
  return (req, res) => {
    const socket = req.socket;
    const queue = waiting.get(socket);
    if (queue === undefined) {
      waiting.set(socket, []);
      return run(socket, req, res);
    }
    if (queue.length >= depth) return void socket.destroy();
    queue.push(() => run(socket, req, res));
  };
}
