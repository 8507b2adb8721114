import { createServer, type Socket } from 'node:net';
import { listenLocal } from './ports.ts';

/** What the fake answers a connection's startup with. */
export type StartupAnswer =
  /** AuthenticationOk and ReadyForQuery: the connection is open. */
  | 'accept'
  /** Nothing: the client waits out its connect timeout. */
  | 'hold'
  /** An ErrorResponse with these fields (C: SQLSTATE, M: message; either may be missing). */
  | { readonly code?: string; readonly message?: string };

/** A statement a client sent: simple protocol (Query) or extended (Parse, under a statement name). */
export interface SentStatement {
  readonly text: string;
  /** The prepared statement's name; '' for an unnamed one; undefined for a simple Query. */
  readonly name: string | undefined;
  /** Which connection sent it, in order of connection (0 = the first). */
  readonly connection: number;
}

/**
 * A PostgreSQL server that speaks just enough of the wire protocol (v3) for pg's Client and Pool: it
 * records each connection's startup parameters and every statement, answers every statement with an
 * empty result, and can refuse startups or fail chosen statements. No rows, no auth, no TLS: for tests
 * of what the adapter sends and of how it handles connections, never of SQL.
 *
 * Hand-written because neither stand-in the project uses can misbehave on cue: PGlite runs in the
 * process (no socket to refuse, hold or cut), and the real server can only be stopped as a whole
 * (test/faults). The protocol part is the startup, Query/Parse/Bind/Describe/Execute/Sync and Terminate messages.
 */
export interface FakePostgres {
  readonly port: number;
  /** Each connection's startup parameters (user, database, application_name, ...), in order. */
  readonly startups: Array<Record<string, string>>;
  readonly statements: SentStatement[];
  /** Connections open right now (from the server's side). */
  openConnections(): number;
  startup: StartupAnswer;
  /** A statement for which this returns fields is answered with that ErrorResponse. */
  fail: (text: string) => { code?: string; message?: string } | undefined;
  /** The row count a statement reports (its CommandComplete tag); no rows are sent. */
  rowCount: (text: string) => number;
  /** Closes every open connection from the server's side, as a restarted server does. */
  dropConnections(): void;
  stop(): Promise<void>;
}

const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const message = (type: string, body: Buffer = Buffer.alloc(0)): Buffer => Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
const cstring = (s: string): Buffer => Buffer.from(`${s}\0`);
const AUTH_OK = message('R', int32(0));
const READY = message('Z', Buffer.from('I'));
const errorResponse = (fields: { code?: string; message?: string }): Buffer =>
  message(
    'E',
    Buffer.concat([
      Buffer.from('S'),
      cstring('ERROR'),
      ...(fields.code === undefined ? [] : [Buffer.from('C'), cstring(fields.code)]),
      ...(fields.message === undefined ? [] : [Buffer.from('M'), cstring(fields.message)]),
      Buffer.from([0]),
    ]),
  );

export async function startFakePostgres(): Promise<FakePostgres> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    const connection = connections++;
    sockets.add(socket);
    // Answers go out a message at a time: without this, Nagle holds each behind the last one's ACK.
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let started = false;
    // Extended protocol: after an error, everything up to Sync is skipped.
    let failed = false;
    // Statements parsed on this connection by name ('' the unnamed one), and the one last bound.
    const prepared = new Map<string, string>();
    let bound = '';
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 4) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const fields = buffer
            .subarray(8, length - 1)
            .toString()
            .split('\0');
          buffer = buffer.subarray(length);
          started = true;
          const params: Record<string, string> = {};
          for (let i = 0; i + 1 < fields.length; i += 2) params[fields[i] as string] = fields[i + 1] as string;
          fake.startups.push(params);
          const answer = fake.startup;
          if (answer === 'accept') socket.write(Buffer.concat([AUTH_OK, READY]));
          else if (answer !== 'hold') socket.end(errorResponse(answer));
          continue;
        }
        if (buffer.length < 5) return;
        const type = String.fromCharCode(buffer[0] as number);
        const length = buffer.readInt32BE(1);
        if (buffer.length < length + 1) return;
        const body = buffer.subarray(5, length + 1);
        buffer = buffer.subarray(length + 1);
        const answer = (text: string, name: string | undefined): Buffer | undefined => {
          fake.statements.push({ text, name, connection });
          const failure = fake.fail(text);
          if (failure === undefined) return undefined;
          failed = true;
          return errorResponse(failure);
        };
        const complete = (text: string): Buffer => message('C', cstring(`SELECT ${fake.rowCount(text)}`));
        switch (type) {
          case 'Q': {
            const text = body.subarray(0, body.indexOf(0)).toString();
            const error = answer(text, undefined);
            failed = false;
            socket.write(Buffer.concat([error ?? complete(text), READY]));
            break;
          }
          case 'P': {
            const nameEnd = body.indexOf(0);
            const name = body.subarray(0, nameEnd).toString();
            const text = body.subarray(nameEnd + 1, body.indexOf(0, nameEnd + 1)).toString();
            prepared.set(name, text);
            if (failed) break;
            socket.write(answer(text, name) ?? message('1'));
            break;
          }
          case 'B': {
            const portalEnd = body.indexOf(0);
            bound = prepared.get(body.subarray(portalEnd + 1, body.indexOf(0, portalEnd + 1)).toString()) ?? '';
            if (!failed) socket.write(message('2'));
            break;
          }
          case 'D':
            if (!failed) socket.write(message('n'));
            break;
          case 'E':
            if (!failed) socket.write(complete(bound));
            break;
          case 'S':
            failed = false;
            socket.write(READY);
            break;
          case 'X':
            socket.end();
            return;
          default:
            break; // Flush, Close: nothing to answer here
        }
      }
    });
  });
  const port = await listenLocal(server);
  const fake: FakePostgres = {
    port,
    startups: [],
    statements: [],
    openConnections: () => sockets.size,
    startup: 'accept',
    fail: () => undefined,
    rowCount: () => 0,
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    stop: async () => {
      fake.dropConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return fake;
}
