import { ServerResponse, type IncomingMessage } from 'node:http';

/** Responses ended during this event-loop turn, in the order they ended. */
const ending: TurnEndResponse[] = [];

function endAll(): void {
  for (const res of ending.splice(0)) res.endNow();
}

/**
 * The ServerResponse of every public HTTP/1.1 server: `end()` takes effect at the end of the event-loop
 * turn it was called in (setImmediate), with every other response ended in that turn, so their bytes
 * leave back to back. Each socket write on loopback wakes the peer waiting for it, and a peer woken
 * once reads several responses: measured with bench/ab.ts, this cut the server CPU of a
 * cache-hit GET by about a third. The head, status and headers are set when the handler calls
 * writeHead/end as before; only the write is later, by the rest of the turn.
 */
export class TurnEndResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  #pendingEnd: unknown[] | undefined;

  override end(...args: unknown[]): this {
    if (this.#pendingEnd !== undefined) return this; // a second end before the first took effect: ignored, as Node ignores one after
    if (this.writableEnded) return super.end(...(args as []));
    this.#pendingEnd = args;
    if (ending.push(this) === 1) setImmediate(endAll);
    return this;
  }

  /** Performs a deferred end now (the turn's flush, or a destroy that must not drop it). */
  endNow(): void {
    const args = this.#pendingEnd;
    if (args === undefined) return;
    this.#pendingEnd = undefined;
    super.end(...(args as []));
  }

  override destroy(error?: Error): this {
    this.endNow();
    return super.destroy(error);
  }
}
