import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { oneRequestAtATime } from './pipeline-gate.ts';
import { HANG_GUARD_MS, until } from '../../../../test/support/eventually.ts';

const ANSWER = Buffer.alloc(1024 * 1024, 0x61);

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  server?.close();
});

function cleanupSocket(socket: Socket): void {
  sockets.push(socket);
}

/** A node:http server whose handler answers 1 MB per request, counting the requests it ran. */
async function serve(gated: boolean): Promise<{ port: number; ran: () => number }> {
  let ran = 0;
  const handler = (_req: unknown, res: { end(body: Buffer): void }): void => {
    ran += 1;
    // Answered on a later turn, as a handler that awaits a store is.
    setImmediate(() => res.end(ANSWER));
  };
  server = createServer(gated ? oneRequestAtATime(handler as never) : (handler as never));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, ran: () => ran };
}

function pipeline(port: number, count: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(count));
      resolve(socket);
    });
  });
}

/** Reads `count` answers of ANSWER's size off `socket`; resolves with how many arrived. */
function readAll(socket: Socket, count: number): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    let answers = 0;
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      answers = Math.floor(bytes / ANSWER.length);
      if (answers >= count) resolve(answers);
    });
    socket.once('close', () => resolve(answers));
  });
}

describe('pipelined HTTP/1.1 requests (rule HTTP1-pipeline-bound)', () => {
  it('[HTTP1-pipeline-bound] a client that does not read its answers gets no request run beyond the kernel buffers, and every answer once it reads', async () => {
    const { port, ran } = await serve(true);
    // 30 requests of 1 MB answers, nothing read: the kernel's socket buffers take a few answers, the
    // process holds one, and the rest wait unparsed-for work.
    const socket = await pipeline(port, 30);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const runWhileNotReading = ran();
    expect(runWhileNotReading).toBeLessThan(30);
    const read = await readAll(socket, 30);
    socket.destroy();
    expect(read).toBe(30);
    expect(ran()).toBe(30);
  });

  it('[HTTP1-pipeline-bound] without the gate Node runs every pipelined request at once (what the gate prevents)', async () => {
    const { port, ran } = await serve(false);
    const socket = await pipeline(port, 30);
    // Every one runs while the client reads nothing (the gated server above runs fewer, however long it waits).
    await until(() => ran() === 30, 'every pipelined request to run');
    socket.destroy();
  });

  it('[HTTP1-pipeline-bound] more requests waiting than the depth close the connection', async () => {
    let ran = 0;
    server = createServer(oneRequestAtATime(() => void (ran += 1), 4));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const socket = await pipeline((server.address() as AddressInfo).port, 10);
    const closed = await new Promise<boolean>((resolve) => {
      socket.resume();
      socket.once('close', () => resolve(true));
    });
    expect(closed).toBe(true);
    // The first ran and never answered: nothing behind it did.
    expect(ran).toBe(1);
  });

  it('[HTTP1-pipeline-bound] a request after the pipeline drained runs at once, as the first one did', async () => {
    server = createServer(oneRequestAtATime((_req, res) => res.end('ok')));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const socket = await pipeline((server.address() as AddressInfo).port, 2);
    cleanupSocket(socket);
    let text = '';
    const answers = (count: number): Promise<void> =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (text.split('HTTP/1.1 200').length - 1 >= count) resolve();
        };
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
          check();
        });
        check();
        socket.setTimeout(HANG_GUARD_MS, () => reject(new Error(`${count} answers expected, read ${text}`)));
      });
    await answers(2);
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await answers(3);
  });

  it('[HTTP1-pipeline-bound] exactly the depth may wait: one more closes the connection unanswered', async () => {
    server = createServer(oneRequestAtATime((_req, res) => res.end('ok'), 4));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    /** Everything read off a pipeline of `count` until `answers` arrived or the server closed it. */
    const answered = async (count: number, answers: number): Promise<{ answers: number; closed: boolean }> => {
      const socket = await pipeline(port, count);
      return new Promise((resolve, reject) => {
        let text = '';
        const seen = (): number => text.split('HTTP/1.1 200').length - 1;
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
          if (seen() >= answers) resolve({ answers: seen(), closed: false });
        });
        socket.once('close', () => resolve({ answers: seen(), closed: true }));
        socket.setTimeout(HANG_GUARD_MS, () => reject(new Error(`${count} pipelined: ${seen()} answers and still open (a hang)`)));
        cleanupSocket(socket);
      });
    };
    // One running and four waiting: all five answered on the open connection.
    expect(await answered(5, 5)).toStrictEqual({ answers: 5, closed: false });
    // A fifth waiting: closed with at most the running one answered.
    const over = await answered(6, 6);
    expect(over.closed).toBe(true);
    expect(over.answers).toBeLessThan(2);
  });
  it('[HTTP1-pipeline-bound] a request waiting behind one whose connection closed never runs, even when that one ends after the close', async () => {
    // Node emits 'finish' for a response ended after its socket closed once its headers went out: the
    // gate must have dropped the connection's queue at the close, or that 'finish' runs the next one.
    const runs: string[] = [];
    const ranAtFinish = new Promise<string[]>((resolve) => {
      server = createServer(
        oneRequestAtATime((req, res) => {
          runs.push(req.url ?? '');
          if (req.url !== '/first') return void res.end('ok');
          res.writeHead(200, { 'content-length': '0' });
          res.flushHeaders();
          let finished = false;
          res.once('finish', () => (finished = true));
          res.once('close', () => {
            res.end();
            // 'finish' comes on the next tick, after the gate's own 'finish' handler ran.
            setImmediate(() => resolve(finished ? [...runs] : ['no finish after the close']));
          });
        }),
      );
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const socket = connect({ host: '127.0.0.1', port: (server!.address() as AddressInfo).port });
    cleanupSocket(socket);
    socket.write('GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n');
    // The first answer's head arrived: both requests were parsed (one write); the client goes away.
    socket.once('data', () => socket.destroy());
    expect(await ranAtFinish).toStrictEqual(['/first']);
  });
});
