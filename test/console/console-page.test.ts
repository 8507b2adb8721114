import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ComponentChecker } from '../../src/lifecycle/checker.ts';
import { HttpMetrics } from '../../src/observability/metrics.ts';
import { createAdminHandler } from '../../src/transports/http/admin/admin-handler.ts';
import { CONSOLE_CSP } from '../../embedded/console/routes.ts';
import { chromiumInstalled, CHROMIUM_PATH, launchChromium, offlineContext } from '../docs/headless-chromium.ts';
import { dropSchemaRun } from '../support/replica-kit.ts';
import { spawnBin, type SpawnedBin } from '../support/spawn-bin.ts';

/**
 * The simulator console (rule CONSOLE-page, CONSOLE-feed) in a real browser: Debian's headless Chromium
 * driven by playwright-core, with every request off the loopback refused (no name but 127.0.0.1
 * resolves, and the context aborts any other request), against each executable spawned `--embedded`.
 * From the page: the cache taken down turns /healthz 503 and the page says so; the clock advanced to the
 * next linger expiry closes the session, whose count drops and whose `session: closed` line appears;
 * an injected database failure shows as a 500 in the request table and the chart. Time moves only
 * through the simulator's clock; the waits are for the page's one-second poll, never assertions.
 * `CONSOLE_SCREENSHOT=reports/console.png` (`npm run console:screenshot`) saves the page as docs/simulator.md shows it.
 */
const EXECUTABLES = ['orders-stdlib', 'orders-koa', 'orders-grpc'] as const;
/** A ceiling against hangs, not a target: Chromium and a spawned Node on a shared 2-core machine. */
const BROWSER_TEST_TIMEOUT_MS = 120_000;
const DEMO = { username: 'alice', password: 'alice-password' };
/** How long to wait for the page's next one-second poll to show a change: a guard, never a measurement. */
const PAGE_WAIT_MS = 20_000;

function poll<T>(read: () => Promise<T>): ReturnType<typeof expect.poll<T>> {
  return expect.poll(read, { timeout: PAGE_WAIT_MS, interval: 100 });
}

interface Embedded {
  readonly api: string;
  readonly admin: string;
  readonly bin: SpawnedBin;
}

async function startEmbedded(name: string): Promise<Embedded> {
  const bin = spawnBin(`bin/${name}.ts`, ['--embedded'], { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'info' });
  const address = async (msg: string): Promise<string> => `http://${String((await bin.waitForLine((l) => l['msg'] === msg, msg))['addr'])}`;
  const [admin, api] = [await address('admin: listening'), await address('api: listening')];
  await bin.waitReady(admin);
  return { api, admin, bin };
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A lingering session: alice logs in, creates an order and reads it back (a read opens her session). */
async function lingeringSession(api: string): Promise<Record<string, string>> {
  const login = await json(`${api}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(DEMO),
  });
  const auth = { authorization: `Bearer ${String(login.body['token'])}` };
  const created = await json(`${api}/orders`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ item: 'console', quantity: 1 }),
  });
  expect(created.status).toBe(201);
  expect((await json(`${api}/orders/${String(created.body['id'])}`, { headers: auth })).status).toBe(200);
  return auth;
}

async function textOf(page: Page, id: string): Promise<string> {
  return (await page.locator(`#${id}`).innerText()).trim();
}

// CI installs Chromium (.ci/run): there a missing browser fails the run instead of skipping it.
const skipBrowser = !chromiumInstalled && process.env['CI'] !== 'true';

describe.skipIf(skipBrowser)(`console page in headless Chromium (${CHROMIUM_PATH}), network cut off`, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const name of EXECUTABLES) {
    describe(`${name} --embedded`, () => {
      let service: Embedded;
      beforeAll(async () => {
        service = await startEmbedded(name);
      });
      afterAll(async () => {
        await service?.bin.stop();
      });

      it(
        'cache down from the page turns /healthz 503 on the page; the clock past the linger closes the session; a failure charts as an error',
        { timeout: BROWSER_TEST_TIMEOUT_MS },
        async () => {
          const { context, requested } = await offlineContext(browser);
          const page = await context.newPage();
          const problems: string[] = [];
          page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
          await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`CSP: ${text}`));
          // Page-side source as text: this project compiles without the DOM library.
          await page.addInitScript({
            content:
              "document.addEventListener('securitypolicyviolation', (event) => window.reportCspViolation(event.violatedDirective + ' ' + event.blockedURI));",
          });
          const response = await page.goto(`${service.admin}/console/`);
          expect(response?.status()).toBe(200);
          expect(response?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
          await poll(() => textOf(page, 'health')).toBe('Health: 200 clean');
          // The table's heading and the chart name one window, and the chart draws the feed's samples from the
          // first look on: the first spans the whole window, a step from its left edge, not a lone point.
          const shown = `[document.getElementById('requests-window').textContent, document.getElementById('chart-window').textContent,
            document.querySelector('#chart polyline.requests')?.getAttribute('points') ?? '']`;
          await poll(async () => {
            const [heading, chart, points] = (await page.evaluate(shown)) as [string, string, string];
            return heading === chart && /^last (minute|\d+ (ms|s|min))$/.test(heading) && points.split(' ').length >= 2;
          }).toBe(true);

          // The network is cut: a navigation off the loopback fails, and the context sees it go; the page
          // itself may not even try (its policy allows requests to its own origin only).
          const probe = await context.newPage();
          await expect(probe.goto('https://example.com/')).rejects.toThrow(/ERR_INTERNET_DISCONNECTED/);
          await probe.close();
          const refused = await page.evaluate(
            "fetch('https://example.com/').then(() => 'answered', (error) => 'failed: ' + error.message)",
          );
          expect(refused).toMatch(/^failed/);

          const earlier = await lingeringSession(service.api);
          await poll(() => textOf(page, 'sessions-lingering')).toBe('1');
          await poll(() => textOf(page, 'sessions-live')).toBe('0');

          // Cache down, from the keyboard: the button is focused and pressed with Enter.
          await page.getByRole('button', { name: 'Take cache down' }).focus();
          await page.keyboard.press('Enter');
          await poll(() => textOf(page, 'health')).toBe('Health: 503 unhealthy (cache unavailable)');
          expect((await json(`${service.admin}/healthz`)).status).toBe(503);
          expect(
            await page
              .getByRole('row', { name: /^cache/ })
              .getByRole('cell')
              .first()
              .innerText(),
          ).toBe('down');
          await page.getByRole('button', { name: 'Bring cache up' }).click();
          await poll(() => textOf(page, 'health')).toBe('Health: 200 clean');
          expect((await json(`${service.admin}/healthz`)).status).toBe(200);

          // The clock, past the linger: the button names the distance to the session's linger timer.
          const linger = page.getByRole('button', { name: /^Advance to next linger expiry \(\d+ min\)$/ });
          await poll(() => linger.isEnabled()).toBe(true);
          await linger.click();
          await poll(() => textOf(page, 'sessions-lingering')).toBe('0');
          await poll(() => page.locator('#log li', { hasText: 'session: closed' }).count()).toBe(1);
          await poll(() => page.locator('#log li', { hasText: 'simulator: clock advanced' }).count()).toBe(1);
          expect(await page.getByRole('button', { name: /^Advance to next linger expiry/ }).isDisabled()).toBe(true);
          const offset = async (): Promise<number> =>
            ((await json(`${service.admin}/simulator`)).body['clock'] as { offsetMs: number }).offsetMs;
          const afterLinger = await offset();
          expect(afterLinger).toBeGreaterThan(0);

          // Past the token lifetime (JWT_EXPIRY, 60 min by default): the token from before is refused.
          await page.getByRole('button', { name: 'Advance past token expiry (60 min)' }).click();
          await poll(offset).toBe(afterLinger + 3_600_000);
          expect(await json(`${service.api}/orders`, { headers: earlier })).toEqual({
            status: 401,
            body: { error: 'invalid or expired token' },
          });
          // By a chosen amount, typed and submitted with Enter.
          await page.getByLabel('Advance by').fill('2');
          await page.getByLabel('Unit').selectOption('minutes');
          await page.getByLabel('Advance by').press('Enter');
          await poll(offset).toBe(afterLinger + 3_600_000 + 120_000);
          await poll(() => textOf(page, 'clock-offset')).toBe(`${Math.round((afterLinger + 3_720_000) / 60_000)} min`);

          // Two injected database failures, set with the labelled field: two 500s, counted and charted.
          // Logged in first: the login reads the database too and would take one of them.
          const login = await json(`${service.api}/auth/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(DEMO),
          });
          const auth = { authorization: `Bearer ${String(login.body['token'])}` };
          await page.getByLabel('database Fail next', { exact: true }).fill('2');
          await page.getByLabel('database Fail next', { exact: true }).press('Enter');
          await poll(() =>
            page
              .getByRole('row', { name: /^database/ })
              .getByRole('cell')
              .nth(2)
              .innerText(),
          ).toBe('2');
          expect((await json(`${service.api}/orders`, { headers: auth })).status).toBe(500);
          expect((await json(`${service.api}/orders`, { headers: auth })).status).toBe(500);
          expect((await json(`${service.api}/orders`, { headers: auth })).status).toBe(200);
          const answers = (status: string) =>
            page
              .locator('#requests tbody tr')
              .filter({ has: page.getByRole('rowheader', { name: status, exact: true }) })
              .getByRole('cell');
          await poll(() => answers('500').innerText()).toBe('2');
          await poll(() => textOf(page, 'chart-summary')).toMatch(/ [1-9]\d* errors,/);
          expect(await page.locator('#chart polyline.errors').count()).toBe(1);
          expect(Number(await textOf(page, 'events-announced'))).toBeGreaterThanOrEqual(1);

          const screenshot = process.env['CONSOLE_SCREENSHOT'] ?? join(mkdtempSync(join(tmpdir(), 'console-')), 'console.png');
          if (name === 'orders-grpc') {
            await page.screenshot({ path: screenshot, fullPage: true });
            expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe('PNG');
          }

          // Offline: every request but the probe's navigation went to the admin listener on the loopback.
          expect(requested.filter((url) => url.startsWith(`${service.admin}/console/`)).length).toBeGreaterThan(3);
          expect(requested.filter((url) => !url.startsWith(`${service.admin}/`))).toEqual(['https://example.com/']);
          // No page error; the one policy violation is the page's own attempt at the probe's address.
          expect(problems).toEqual(['CSP: connect-src https://example.com/']);
          await context.close();
        },
      );

      it('is not on the public listener', async () => {
        for (const path of ['/console/', '/console/page.js', '/console/state'])
          expect((await fetch(`${service.api}${path}`)).status).toBe(404);
      });
    });
  }
});

/** The admin handler of a service without --embedded: no simulator, hence no console. */
describe('console without --embedded (in-process admin handler)', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer(createAdminHandler(new ComponentChecker([]), new HttpMetrics()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each(['/console', '/console/', '/console/page.js', '/console/page.css', '/console/state'])('GET %s is 404 not found', async (path) => {
    expect(await json(`${base}${path}`)).toEqual({ status: 404, body: { error: 'not found' } });
  });
});

/** Real backends when the environment names them (npm test on the dev machine, CI). */
const REAL = ['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL'].every((name) => (process.env[name] ?? '') !== '');
const SCHEMA = `t_console_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

describe.skipIf(!REAL)('console without --embedded (each executable on the real backends)', () => {
  const env = {
    POSTGRES_DSN: process.env['POSTGRES_DSN'] ?? '',
    REDIS_ADDR: process.env['REDIS_ADDR'] ?? '',
    NATS_URL: process.env['NATS_URL'] ?? '',
    POSTGRES_SCHEMA: SCHEMA,
    JWT_SECRET: 'console-test-secret-0123456789-abcdefghijklmnop',
    HTTP_ADDR: '127.0.0.1:0',
    ADMIN_ADDR: '127.0.0.1:0',
    LOG_LEVEL: 'info',
  };
  afterAll(async () => {
    await dropSchemaRun({ dsn: env.POSTGRES_DSN, redisAddr: env.REDIS_ADDR, natsUrl: env.NATS_URL }, SCHEMA);
  });

  it.each(EXECUTABLES)(
    '%s: the admin listener answers /healthz but 404 for /console/ and its files',
    { timeout: BROWSER_TEST_TIMEOUT_MS },
    async (name) => {
      const bin = spawnBin(`bin/${name}.ts`, [], env);
      try {
        const admin = `http://${String((await bin.waitForLine((l) => l['msg'] === 'admin: listening', 'admin: listening'))['addr'])}`;
        await bin.waitReady(admin);
        expect((await fetch(`${admin}/healthz`)).status).toBe(200);
        for (const path of ['/console/', '/console/page.js', '/console/state'])
          expect(await json(`${admin}${path}`)).toEqual({ status: 404, body: { error: 'not found' } });
      } finally {
        await bin.stop();
      }
    },
  );
});
