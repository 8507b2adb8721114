import { connect, type Socket } from 'node:net';

/**
 * HTTP/2 frames written by hand on a TCP socket (RFC 9113 section 4, HPACK RFC 7541): the header blocks
 * no client library would send (oversized, or a bomb of dynamic-table references) and the GOAWAY the
 * server answers them with. Cleartext, prior knowledge, as the one-port listener speaks it.
 */

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const FRAME = { HEADERS: 1, SETTINGS: 4, GOAWAY: 7, CONTINUATION: 9 } as const;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const END_STREAM_AND_HEADERS = END_STREAM | END_HEADERS;
const SETTINGS_ACK = 0x1;

export function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(stream, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK integer with an N-bit prefix (RFC 7541 section 5.1), `first` holding the prefix's flag bits. */
function hpackInteger(value: number, prefixBits: number, first: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([first | value]);
  const bytes = [first | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function hpackString(text: Buffer): Buffer {
  return Buffer.concat([hpackInteger(text.length, 7, 0), text]);
}

/** `:method GET`, `:scheme http`, `:path /` from the static table. */
export const GET_ROOT = Buffer.from([0x82, 0x86, 0x84]);

/** A literal header field with a new name; `index` adds it to the server's dynamic table (entry 62). */
export function literalHeader(name: string, value: Buffer, index: boolean): Buffer {
  return Buffer.concat([Buffer.from([index ? 0x40 : 0x00]), hpackString(Buffer.from(name)), hpackString(value)]);
}

/** `count` references to dynamic-table entry 62, the newest one. */
export function newestEntryReferences(count: number): Buffer {
  return Buffer.alloc(count, 0x80 | 62);
}

/**
 * One complete header block (END_STREAM) on a client stream: one HEADERS frame, or HEADERS and then
 * CONTINUATION frames when it is larger than the smallest SETTINGS_MAX_FRAME_SIZE (16 KiB).
 */
export function headersFrame(stream: number, block: Buffer): Buffer {
  const max = 16_384;
  if (block.length <= max) return frame(FRAME.HEADERS, END_STREAM_AND_HEADERS, stream, block);
  const frames = [frame(FRAME.HEADERS, END_STREAM, stream, block.subarray(0, max))];
  for (let at = max; at < block.length; at += max) {
    frames.push(frame(FRAME.CONTINUATION, at + max >= block.length ? END_HEADERS : 0, stream, block.subarray(at, at + max)));
  }
  return Buffer.concat(frames);
}

/** A raw HTTP/2 connection: preface and SETTINGS sent, the server's SETTINGS acknowledged, GOAWAY noted. */
export interface RawH2 {
  readonly socket: Socket;
  /** The error code of the server's first GOAWAY, once one arrived. */
  goaway(): number | undefined;
  /** Resolves when the server has closed the connection (or it failed). */
  readonly closed: Promise<void>;
  write(bytes: Buffer): boolean;
}

export function rawH2(host: string, port: number): Promise<RawH2> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let goaway: number | undefined;
    let pending = Buffer.alloc(0);
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        const type = pending[3];
        if (type === FRAME.GOAWAY) goaway ??= pending.readUInt32BE(9 + 4);
        if (type === FRAME.SETTINGS && (pending[4]! & SETTINGS_ACK) === 0)
          socket.write(frame(FRAME.SETTINGS, SETTINGS_ACK, 0, Buffer.alloc(0)));
        pending = pending.subarray(9 + length);
      }
    });
    socket.once('connect', () => {
      socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(0))]));
      resolve({ socket, goaway: () => goaway, closed, write: (bytes) => socket.write(bytes) });
    });
    socket.once('error', reject);
  });
}
