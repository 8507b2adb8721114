import { createServer, type Server, type Socket } from 'node:net';
import { listenLocal } from './ports.ts';

/**
 * A Redis stand-in on a loopback port, in this process, for the connection behaviour of the Redis
 * adapters (outages, stalls, reconnects, QUIT) in the hermetic suite. It speaks just enough RESP for
 * ioredis: CLIENT and INFO of the handshake, PING, GET, SET and QUIT; the data lives in `data`.
 * Storage semantics are the real server's business (test/contracts/redis-cache.real.test.ts).
 *
 * - `up`: answers every command.
 * - `mute`: keeps its connections and reads them, but answers nothing (a stalled server).
 * - `refuse`: hangs up every new connection as soon as it is accepted (the server is gone).
 */
export type FakeRedisMode = 'up' | 'mute' | 'refuse';

export interface ReceivedCommand {
  /** 1 for the first connection accepted, 2 for the next, ... */
  readonly connection: number;
  /** Command name upper-cased, then its arguments. */
  readonly args: readonly string[];
}

export class FakeRedisServer {
  mode: FakeRedisMode = 'up';
  readonly data = new Map<string, string>();
  readonly received: ReceivedCommand[] = [];
  /** Connections accepted so far, refused ones included. */
  accepted = 0;
  readonly #server: Server;
  readonly #open = new Set<Socket>();
  #port = 0;

  constructor() {
    this.#server = createServer((socket) => this.#serve(socket));
  }

  get port(): number {
    return this.#port;
  }

  /** Connections open now (the server's side). */
  get openConnections(): number {
    return this.#open.size;
  }

  async start(): Promise<number> {
    this.#port = await listenLocal(this.#server);
    return this.#port;
  }

  /** Commands named `name` (upper case), in arrival order. */
  commands(name: string): ReceivedCommand[] {
    return this.received.filter((command) => command.args[0] === name);
  }

  /** Drops every open connection: `fin` closes them cleanly, `reset` with a TCP RST (the client sees ECONNRESET). */
  hangUp(how: 'fin' | 'reset'): void {
    for (const socket of this.#open) {
      if (how === 'reset') socket.resetAndDestroy();
      else socket.destroy();
    }
  }

  async close(): Promise<void> {
    this.hangUp('fin');
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #serve(socket: Socket): void {
    this.accepted += 1;
    const connection = this.accepted;
    if (this.mode === 'refuse') {
      socket.destroy();
      return;
    }
    this.#open.add(socket);
    socket.on('close', () => this.#open.delete(socket));
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const parsed = parseCommand(pending);
        if (parsed === undefined) break;
        pending = pending.subarray(parsed.length);
        const args = [parsed.args[0]?.toUpperCase() ?? '', ...parsed.args.slice(1)];
        this.received.push({ connection, args });
        if (this.mode !== 'up') continue;
        socket.write(this.#reply(args));
        if (args[0] === 'QUIT') socket.end();
      }
    });
  }

  #reply(args: readonly string[]): string {
    switch (args[0]) {
      case 'CLIENT':
      case 'QUIT':
        return '+OK\r\n';
      case 'INFO':
        return bulk('# Server\r\nredis_version:7.2.0\r\nloading:0\r\n');
      case 'PING':
        return '+PONG\r\n';
      case 'GET': {
        const value = this.data.get(args[1] ?? '');
        return value === undefined ? '$-1\r\n' : bulk(value);
      }
      case 'SET':
        this.data.set(args[1] ?? '', args[2] ?? '');
        return '+OK\r\n';
      default:
        return `-ERR unknown command '${args[0]}'\r\n`;
    }
  }
}

function bulk(value: string): string {
  return `$${Buffer.byteLength(value)}\r\n${value}\r\n`;
}

/** One RESP array of bulk strings from the front of `buffer`, or undefined while it is incomplete. */
function parseCommand(buffer: Buffer): { args: string[]; length: number } | undefined {
  let offset = 0;
  const line = (): string | undefined => {
    const end = buffer.indexOf('\r\n', offset);
    if (end < 0) return undefined;
    const text = buffer.toString('utf8', offset, end);
    offset = end + 2;
    return text;
  };
  const header = line();
  if (header === undefined) return undefined;
  if (!header.startsWith('*')) throw new Error(`fake redis: expected an array, got ${JSON.stringify(header)}`);
  const count = Number(header.slice(1));
  const args: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const size = line();
    if (size === undefined) return undefined;
    const length = Number(size.slice(1));
    if (buffer.length < offset + length + 2) return undefined;
    args.push(buffer.toString('utf8', offset, offset + length));
    offset += length + 2;
  }
  return { args, length: offset };
}
