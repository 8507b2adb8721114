// The /console routes (routes.ts, rules CONSOLE-page, CONSOLE-feed) on a real admin handler: the three
// files with their headers, HEAD, the 404 for other methods, and how `after` reaches the feed.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NOT_FOUND, send, serve } from '../../test/support/one-request.ts';
import type { Checker } from '../../src/lifecycle/checker.ts';
import { HttpMetrics } from '../../src/observability/metrics.ts';
import { createAdminHandler } from '../../src/transports/http/admin/admin-handler.ts';
import type { ConsoleFeed } from './feed.ts';
import { consoleRoutes } from './routes.ts';

const CLEAN: Checker = { health: async () => ({ clean: true, nodes: null }), ready: async () => ({ clean: true, nodes: null }) };

/** The admin listener's handler with the console's routes on `feed`, as the embedded ring adds them. */
const adminWith = (feed: ConsoleFeed) => createAdminHandler(CLEAN, new HttpMetrics(), consoleRoutes(feed));

/** A feed that records the `after` it was asked for and answers it back. */
function recordingFeed(): { feed: ConsoleFeed; asked: number[] } {
  const asked: number[] = [];
  const feed = { snapshot: async (after: number) => (asked.push(after), { after }) } as unknown as ConsoleFeed;
  return { feed, asked };
}

describe('CONSOLE-page, CONSOLE-feed: the console routes', () => {
  const FILES = [
    ['/console/', 'index.html', 'text/html; charset=utf-8'],
    ['/console/page.css', 'page.css', 'text/css; charset=utf-8'],
    ['/console/page.js', 'page.js', 'text/javascript; charset=utf-8'],
  ] as const;

  it('[CONSOLE-page] serve the three shipped files with the policy the rule names, and HEAD with no body', async () => {
    const port = await serve(adminWith(recordingFeed().feed));
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
      expect(reply.text).toBe(readFileSync(new URL(`./${file}`, import.meta.url), 'utf8'));
      expect(await send(port, 'HEAD', path)).toMatchObject({ status: 200, headers: { 'content-type': type }, text: '' });
    }
  });

  it('[CONSOLE-page] HEAD hands node:http no body, so a server that refuses body writes on HEAD answers it too', async () => {
    const port = await serve(adminWith(recordingFeed().feed), true);
    for (const [path, , type] of FILES)
      expect(await send(port, 'HEAD', path)).toMatchObject({ status: 200, headers: { 'content-type': type }, text: '' });
    expect(await send(port, 'HEAD', '/console/state')).toMatchObject({ status: 200, headers: { 'content-type': 'application/json' } });
  });

  it('[CONSOLE-page] other methods are not the console: 404', async () => {
    const port = await serve(adminWith(recordingFeed().feed));
    for (const method of ['POST', 'PUT', 'DELETE'])
      for (const path of ['/console', '/console/', '/console/state'])
        expect([method, path, await send(port, method, path)]).toMatchObject([method, path, NOT_FOUND]);
  });

  it('[CONSOLE-feed] /console/state reads the log after `after`, from the start when it is absent or no count', async () => {
    const { feed, asked } = recordingFeed();
    const port = await serve(adminWith(feed));
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
