import { readFileSync } from 'node:fs';
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Trouble } from '../../../../fakes/trouble.ts';
import { HANG_GUARD_MS } from '../../../../test/support/eventually.ts';
import { listenLocal } from '../../../../test/support/ports.ts';
import type { Checker } from '../../../lifecycle/checker.ts';
import { HttpMetrics } from '../../../observability/metrics.ts';
import type { ConsoleFeed } from '../../../simulator/console-feed.ts';
import { SimulatedTime } from '../../../simulator/simulated-time.ts';
import { Simulator } from '../../../simulator/simulator.ts';
import { createAdminHandler } from './admin-handler.ts';
import { answerSimulator, SIMULATOR_BODY_LIMIT } from './simulator-routes.ts';

const CLEAN: Checker = { health: async () => ({ clean: true, nodes: null }), ready: async () => ({ clean: true, nodes: null }) };
const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** Serves `handler` on loopback for the test; returns the port. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, strict = false): Promise<number> {
  const server = createServer({ rejectNonStandardBodyWrites: strict }, handler);
  const port = await listenLocal(server);
  closers.push(() => server.close());
  return port;
}

/**
 * One request on its own keep-alive connection (node:http, so every header is seen as sent, `connection`
 * too), closed once answered; a second at most.
 */
function send(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const agent = new Agent({ keepAlive: true });
  return new Promise<Answer>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent, timeout: HANG_GUARD_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer (a hang)`)));
    req.on('error', reject);
    req.end(body);
  }).finally(() => agent.destroy());
}

function simulator(): Simulator {
  return new Simulator({
    components: [{ name: 'database', trouble: new Trouble('database') }],
    time: new SimulatedTime({ base: () => 0, realTimers: false }),
    logger: QUIET,
  });
}

/** A feed that records the `after` it was asked for and answers it back. */
function recordingFeed(): { feed: ConsoleFeed; asked: number[] } {
  const asked: number[] = [];
  const feed = { snapshot: async (after: number) => (asked.push(after), { after }) } as unknown as ConsoleFeed;
  return { feed, asked };
}

const NOT_FOUND = { status: 404, headers: { 'content-type': 'application/json' }, text: '{"error":"not found"}' };

describe('admin listener routing (spec 4.2)', () => {
  it('[ADMIN-healthz] an absolute-form target is routed by its path, an origin-form `//` one stays a path', async () => {
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics()));
    expect(await send(port, 'GET', 'http://admin.example/healthz')).toMatchObject({ status: 200, text: '{"clean":true,"nodes":null}' });
    expect(await send(port, 'GET', '//healthz')).toMatchObject(NOT_FOUND);
  });

  it('[SIM-embedded-only, CONSOLE-page] without a simulator or a feed, /simulator and /console paths are the JSON 404', async () => {
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics()));
    for (const path of ['/simulator', '/console/', '/console/state', '/nowhere'])
      expect([path, await send(port, 'GET', path)]).toMatchObject([path, NOT_FOUND]);
  });

  it('a failure after the status line went out still ends the answer with the Error body', async () => {
    const metrics = {
      contentType: 'text/plain',
      scrape: async () => {
        throw new Error('registry bug');
      },
    } as unknown as HttpMetrics;
    const port = await serve(createAdminHandler(CLEAN, metrics));
    expect(await send(port, 'GET', '/metrics')).toMatchObject({ status: 200, text: '{"error":"internal server error"}' });
  });

  it('a failure before any header is a JSON 500', async () => {
    const broken: Checker = {
      health: async () => {
        throw new Error('checker bug');
      },
      ready: CLEAN.ready,
    };
    const port = await serve(createAdminHandler(broken, new HttpMetrics()));
    expect(await send(port, 'GET', '/healthz')).toMatchObject({
      status: 500,
      headers: { 'content-type': 'application/json' },
      text: '{"error":"internal server error"}',
    });
  });
});

describe('CONSOLE-page, CONSOLE-feed: the console routes', () => {
  const FILES = [
    ['/console/', 'index.html', 'text/html; charset=utf-8'],
    ['/console/console.css', 'console.css', 'text/css; charset=utf-8'],
    ['/console/console.js', 'console.js', 'text/javascript; charset=utf-8'],
  ] as const;

  it('[CONSOLE-page] serve the three shipped files with the policy the rule names, and HEAD with no body', async () => {
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics(), undefined, recordingFeed().feed));
    for (const [path, file, type] of FILES) {
      const reply = await send(port, 'GET', path);
      expect(reply).toMatchObject({
        status: 200,
        headers: {
          'content-type': type,
          'content-security-policy':
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
          'cache-control': 'no-cache',
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
        },
      });
      expect(reply.text).toBe(readFileSync(new URL(`./console/${file}`, import.meta.url), 'utf8'));
      expect(await send(port, 'HEAD', path)).toMatchObject({ status: 200, headers: { 'content-type': type }, text: '' });
    }
  });

  it('[CONSOLE-page] HEAD hands node:http no body, so a server that refuses body writes on HEAD answers it too', async () => {
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics(), undefined, recordingFeed().feed), true);
    for (const [path, , type] of FILES)
      expect(await send(port, 'HEAD', path)).toMatchObject({ status: 200, headers: { 'content-type': type }, text: '' });
    expect(await send(port, 'HEAD', '/console/state')).toMatchObject({ status: 200, headers: { 'content-type': 'application/json' } });
  });

  it('[CONSOLE-page] other methods are not the console: 404', async () => {
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics(), undefined, recordingFeed().feed));
    for (const method of ['POST', 'PUT', 'DELETE'])
      for (const path of ['/console', '/console/', '/console/state'])
        expect([method, path, await send(port, method, path)]).toMatchObject([method, path, NOT_FOUND]);
  });

  it('[CONSOLE-feed] /console/state reads the log after `after`, from the start when it is absent or no count', async () => {
    const { feed, asked } = recordingFeed();
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics(), undefined, feed));
    const state = await send(port, 'GET', '/console/state?after=7');
    expect(state).toMatchObject({
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-cache', 'referrer-policy': 'no-referrer' },
      text: '{"after":7}',
    });
    for (const query of ['', '?after=0', '?after=-1', '?after=abc', '?after=1.5', '?after=1e300'])
      await send(port, 'GET', `/console/state${query}`);
    expect(asked).toStrictEqual([7, 0, 0, 0, 0, 0, 0]);
  });
});

describe('SIM-embedded-only, SIM-component-settings: the simulator routes', () => {
  it('answer JSON, and an unreadable body is the error table`s 400', async () => {
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics(), simulator()));
    const state = await send(port, 'GET', '/simulator');
    expect(state).toMatchObject({ status: 200, headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(state.text)).toMatchObject({ components: [{ name: 'database', state: 'up' }] });
    const json = { 'content-type': 'application/json' };
    expect(await send(port, 'PUT', '/simulator/components/database', '{"state":', json)).toMatchObject({
      status: 400,
      headers: { 'content-type': 'application/json' },
      text: '{"error":"malformed request body"}',
    });
    // A validation refusal keeps the connection; a body over the limit closes it (the rest goes unread).
    expect((await send(port, 'PUT', '/simulator/components/database', '{}', json)).headers['connection']).not.toBe('close');
    expect(await send(port, 'PUT', '/simulator/components/database', 'x'.repeat(SIMULATOR_BODY_LIMIT + 1), json)).toMatchObject({
      status: 413,
      headers: { connection: 'close' },
    });
  });

  it('a component is the last path segment after /simulator/components/ and nothing else', async () => {
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics(), simulator()));
    const down = '{"state":"down"}';
    for (const path of ['/simulator/simulator/components/database', '/simulator/components/database/x'])
      expect([path, await send(port, 'PUT', path, down)]).toMatchObject([path, NOT_FOUND]);
    expect(await send(port, 'PUT', '/simulator/components/database', down)).toMatchObject({ status: 200 });
  });

  it('answerSimulator says which paths it answered, and lets an unexpected failure through', async () => {
    const answered: [string, boolean][] = [];
    const sim = simulator();
    const port = await serve((req, res) => {
      const path = new URL(req.url ?? '/', 'http://admin').pathname;
      void answerSimulator(sim, req, res, path).then((own) => {
        answered.push([`${req.method} ${path}`, own]);
        if (!own) res.writeHead(404).end();
      });
    });
    await send(port, 'GET', '/simulator');
    await send(port, 'POST', '/simulator/reset');
    await send(port, 'GET', '/simulator/unknown');
    await send(port, 'GET', '/console/');
    expect(answered).toStrictEqual([
      ['GET /simulator', true],
      ['POST /simulator/reset', true],
      ['GET /simulator/unknown', false],
      ['GET /console/', false],
    ]);
    const broken = {
      state: () => {
        throw new Error('simulator bug');
      },
    } as unknown as Simulator;
    const fakeRes = { setHeader: () => undefined, writeHead: () => fakeRes, end: () => fakeRes } as unknown as ServerResponse;
    await expect(answerSimulator(broken, { method: 'GET' } as IncomingMessage, fakeRes, '/simulator')).rejects.toThrow('simulator bug');
  });
});
