import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long a closing connection keeps reading what the client still sends (rule HTTP-close-linger). */
export const LINGER_MS = 1_000;

/**
 * Rule HTTP-close-linger (RFC 9112 §9.6, "tear-down"). After an answer with `Connection: close`, Node
 * ends the socket and destroys it at once (net.Socket#destroySoon). A client still sending its body, as
 * one refused with 413 before a byte of it was read does, then writes into a closed socket: the reset
 * that follows can discard the answer before the client reads it, and a relay (Docker's port proxy)
 * drops it outright, so the client sees EPIPE, not 413. Node has no option for a staged close, so this
 * replaces the one step: send the FIN, keep reading (the parser drops the rest of the body), and destroy
 * when the client closes its side or after `lingerMs`, whichever comes first: a client that never stops
 * sending holds the socket for that long at most.
 */
export function lingerBeforeClose(server: Server, lingerMs = LINGER_MS): void {
  // One function for every socket of the server (Node calls it as the socket's method): accepting a
  // connection costs a property set, not a closure; the timer's closures are made only at a close.
  function destroySoon(this: Socket): void {
    this.end();
    const timer = setTimeout(() => this.destroy(), lingerMs);
    // A linger keeps no process alive, and a socket closed first takes its timer with it.
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  }
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = destroySoon;
  });
}
