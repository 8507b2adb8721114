import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../test/support/eventually.ts';
import { createHttp1Server, type Http1Settings } from '../src/transports/http/server/http1.ts';
import { TurnEndResponse } from './turn-end-response.ts';

let close: (() => Promise<void>) | undefined;
afterEach(async () => close?.());

async function serve(
  handler: Parameters<typeof createHttp1Server>[0],
  settings: Http1Settings = { response: TurnEndResponse },
): Promise<string> {
  const server = createHttp1Server(handler, settings);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('TurnEndResponse: a response ends at the end of the event-loop turn', () => {
  it('[CHAIN-turn-end-writes] defers the write past the handler, keeps status, headers and body, and ignores a second end', async () => {
    const seen: boolean[] = [];
    const base = await serve((_req, res) => {
      expect(res).toBeInstanceOf(TurnEndResponse);
      res.writeHead(201, { 'content-type': 'application/json', 'x-probe': 'yes' });
      res.end('{"a":1}');
      res.end('{"b":2}');
      seen.push(res.writableEnded); // not yet: the write waits for the end of the turn
      setImmediate(() => seen.push(res.writableEnded));
    });
    const reply = await fetch(`${base}/x`);
    expect([reply.status, reply.headers.get('x-probe'), await reply.text()]).toEqual([201, 'yes', '{"a":1}']);
    expect(seen).toEqual([false, true]);
  });

  it("[CHAIN-turn-end-writes] an end after the response has ended is Node's own, at once: its callback is told so in the same turn", async () => {
    const seen: string[] = [];
    const base = await serve((_req, res) => {
      res.end('once');
      res.once('finish', () => {
        res.end((error?: Error | null) =>
          seen.push(error?.name === undefined ? 'no error' : ((error as NodeJS.ErrnoException).code ?? 'error')),
        );
        seen.push('returned');
      });
    });
    expect(await (await fetch(`${base}/x`)).text()).toBe('once');
    await until(() => seen.length === 2, 'the callback of the second end');
    expect(seen).toEqual(['ERR_STREAM_ALREADY_FINISHED', 'returned']);
  });

  it('[CHAIN-turn-end-writes] a destroy in the turn of the end performs the end first, never drops it', async () => {
    const seen: boolean[] = [];
    const base = await serve((_req, res) => {
      res.end('last words');
      res.destroy();
      seen.push(res.writableEnded);
    });
    // Ended, and so handed to the socket, before the destroy closed it: the client reads the whole answer.
    expect(await (await fetch(`${base}/x`)).text()).toBe('last words');
    expect(seen).toEqual([true]);
  });

  it('[CHAIN-turn-end-writes] answers many concurrent requests on their own connections, each with its own body', async () => {
    const base = await serve((req, res) => res.end(req.url));
    const paths = Array.from({ length: 20 }, (_, i) => `/r${i}`);
    const bodies = await Promise.all(paths.map(async (path) => (await fetch(`${base}${path}`)).text()));
    expect(bodies).toEqual(paths);
  });

  it("[CHAIN-turn-end-writes] is optional: without the ring the server writes each response when it ends, with Node's own class", async () => {
    const seen: boolean[] = [];
    const base = await serve((_req, res) => {
      seen.push(res instanceof TurnEndResponse);
      res.end('now');
      seen.push(res.writableEnded);
    }, {});
    expect(await (await fetch(`${base}/x`)).text()).toBe('now');
    expect(seen).toEqual([false, true]);
  });
});
