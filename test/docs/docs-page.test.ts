import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { openapiOperations } from '../openapi/openapi-operations.ts';
import { SWAGGER_ASSETS } from '../../src/transports/http/docs/swagger-assets.ts';
import { SWAGGER_CDN_ORIGIN } from '../../src/transports/http/docs/swagger-page.ts';
import { fileURLToPath } from 'node:url';
import { spawnBin } from '../support/spawn-bin.ts';
import { chromiumInstalled, CHROMIUM_PATH, launchChromium, offlineContext } from './headless-chromium.ts';

/**
 * The docs page in a real browser (rule SWAGGER-offline-fallback, SWAGGER-csp): Debian's headless
 * Chromium driven by playwright-core, with every request off the loopback refused, so the CDN is out
 * of reach as on a machine without internet. The page must render all five operations from the
 * service's own copy of Swagger UI, and Try it out must log in and list orders against the service.
 * `DOCS_SCREENSHOT=reports/docs-page.png` (`npm run docs:screenshot`) saves the rendered page (docs/api.md's
 * picture) and, beside it, the response header names it shows (`reports/docs-page-headers.txt`). Every other run
 * compares the names the page shows now with that record, so the picture cannot go on showing headers
 * the service no longer sends.
 */
const SCREENSHOT_RECORD = fileURLToPath(new URL('../../reports/docs-page-headers.txt', import.meta.url));
const DEMO = { username: 'alice', password: 'alice-password' };
const EXECUTABLES = ['orders-grpc', 'orders-stdlib', 'orders-koa'] as const;
/** A generous ceiling, not a target: a 1.7 MB bundle parsed by Chromium on a CI machine shared with other suites. */
const BROWSER_TEST_TIMEOUT_MS = 120_000;
const ASSET_PATHS = SWAGGER_ASSETS.map((asset) => `/swagger/assets/${asset.name}`);

/** One executable as a user runs it (`node bin/<name>.ts --embedded`, demo users seeded) on port 0. */
interface EmbeddedService {
  readonly baseUrl: string;
  stop(): Promise<unknown>;
}

async function startEmbedded(name: string): Promise<EmbeddedService> {
  const bin = spawnBin(`bin/${name}.ts`, ['--embedded'], { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'info' });
  const listening = await bin.waitForLine((line) => line['msg'] === 'api: listening', 'api: listening');
  return { baseUrl: `http://${String(listening['addr'])}`, stop: () => bin.stop() };
}

interface PageWatch {
  readonly page: Page;
  readonly requested: string[];
  /** CSP violations reported by the page, and uncaught page errors. */
  readonly problems: string[];
}

async function openDocs(browser: Browser, service: EmbeddedService, offsite?: Parameters<typeof offlineContext>[1]): Promise<PageWatch> {
  const { context, requested } = await offlineContext(browser, offsite);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`CSP: ${text}`));
  // Page-side source as text: this project compiles without the DOM library.
  await page.addInitScript({
    content:
      "document.addEventListener('securitypolicyviolation', (event) => window.reportCspViolation(event.violatedDirective + ' ' + event.blockedURI));",
  });
  await page.goto(`${service.baseUrl}/swagger/`);
  await page
    .locator('.opblock')
    .nth(openapiOperations().length - 1)
    .waitFor();
  return { page, requested, problems };
}

async function renderedOperations(page: Page): Promise<string[]> {
  const summaries = await page
    .locator('.opblock .opblock-summary')
    .evaluateAll((elements) =>
      elements.map(
        (element) =>
          `${element.querySelector('.opblock-summary-method')?.textContent} ${element.querySelector('.opblock-summary-path')?.textContent}`,
      ),
    );
  return summaries.map((summary) => summary.replace(/\u200b/g, '')).sort();
}

/** Opens an operation, presses Try it out, optionally fills the JSON body, executes; the rendered status and body. */
async function tryItOut(operation: Locator, body?: unknown): Promise<{ status: string; json: unknown; curl: string }> {
  await operation.locator('.opblock-summary').click();
  await operation.getByRole('button', { name: 'Try it out' }).click();
  if (body !== undefined) await operation.locator('textarea.body-param__text').fill(JSON.stringify(body));
  await operation.getByRole('button', { name: 'Execute' }).click();
  const response = operation.locator('.live-responses-table tbody tr.response').first();
  await response.waitFor();
  return {
    status: (await response.locator('.response-col_status').innerText()).trim(),
    json: JSON.parse(await response.locator('.response-col_description pre').first().innerText()) as unknown,
    curl: await operation.locator('.curl-command').innerText(),
  };
}

/** The header names Swagger UI renders under "Response headers" of an executed operation, sorted. */
async function renderedHeaderNames(operation: Locator): Promise<string[]> {
  const blocks = await operation.locator('.live-responses-table .response-col_description pre').allInnerTexts();
  const headers = blocks.find((text) => /^\s*content-type: /m.test(text)) ?? '';
  return headers
    .split('\n')
    .map((line) => line.split(':')[0]?.trim().toLowerCase() ?? '')
    .filter((name) => name !== '')
    .sort();
}

async function authorize(page: Page, token: string): Promise<void> {
  await page.locator('.auth-wrapper button.authorize').click();
  const modal = page.locator('.modal-ux');
  await modal.locator('input').first().fill(token);
  await modal.locator('button[type=submit]').click();
  await modal.getByRole('button', { name: 'Close' }).click();
}

// CI installs Chromium (.ci/run): there a missing browser fails the run instead of skipping it.
const skipBrowser = !chromiumInstalled && process.env['CI'] !== 'true';

describe.skipIf(skipBrowser)(`docs page in headless Chromium (${CHROMIUM_PATH}), CDN unreachable`, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const bin of EXECUTABLES) {
    describe(bin, () => {
      let service: EmbeddedService;
      beforeAll(async () => {
        service = await startEmbedded(bin);
      });
      afterAll(async () => {
        await service?.stop();
      });

      it(
        'falls back to the served Swagger UI, shows every operation, logs in and lists orders with Try it out',
        { timeout: BROWSER_TEST_TIMEOUT_MS },
        async () => {
          const { page, requested, problems } = await openDocs(browser, service);

          const offsite = requested.filter((url) => !url.startsWith(service.baseUrl));
          expect(offsite.length).toBeGreaterThan(0);
          expect(offsite.every((url) => url.startsWith(`${SWAGGER_CDN_ORIGIN}/`))).toBe(true);
          for (const path of ASSET_PATHS) expect(requested).toContain(`${service.baseUrl}${path}`);
          expect(await renderedOperations(page)).toEqual(
            openapiOperations()
              .map((op) => `${op.method} ${op.path}`)
              .sort(),
          );

          // An order of alice's made outside the page, so the listing has something to show.
          const login = (await (
            await fetch(`${service.baseUrl}/auth/login`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(DEMO),
            })
          ).json()) as { token: string };
          const created = await fetch(`${service.baseUrl}/orders`, {
            method: 'POST',
            headers: { authorization: `Bearer ${login.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ item: 'docs-page', quantity: 2 }),
          });
          const order = (await created.json()) as { id: string };
          expect(created.status).toBe(201);

          const loggedIn = await tryItOut(page.locator('#operations-auth-login'), DEMO);
          expect(loggedIn.status).toBe('200');
          const token = (loggedIn.json as { token?: unknown }).token;
          expect(typeof token).toBe('string');

          await authorize(page, String(token));
          const listed = await tryItOut(page.locator('#operations-orders-listOrders'));
          expect(listed.curl).toContain(`Authorization: Bearer ${String(token)}`);
          expect(listed.status).toBe('200');
          expect(listed.json).toMatchObject({ orders: [{ id: order.id, item: 'docs-page', quantity: 2, status: 'pending' }] });

          // The headers the page shows are the ones the service sends (the same request, made directly).
          const shown = await renderedHeaderNames(page.locator('#operations-orders-listOrders'));
          const direct = await fetch(`${service.baseUrl}/orders?limit=20&offset=0`, {
            headers: { authorization: `Bearer ${String(token)}` },
          });
          expect(shown).toEqual([...direct.headers.keys()].sort());
          expect(shown).toContain('ratelimit-remaining');

          expect(problems).toEqual([]);
          const screenshot = process.env['DOCS_SCREENSHOT'];
          if (bin === 'orders-grpc') {
            if (screenshot !== undefined) {
              // Login folded away so the picture shows the listing; the token (short-lived, its secret gone
              // with the process) is masked anyway.
              await page.locator('#operations-auth-login .opblock-summary').click();
              await page.screenshot({ path: screenshot, fullPage: true, mask: [page.locator('.curl-command')], maskColor: '#41444e' });
              writeFileSync(screenshot.replace(/\.png$/, '-headers.txt'), `${shown.join('\n')}\n`);
            } else {
              expect(existsSync(SCREENSHOT_RECORD), 'reports/docs-page-headers.txt missing: npm run docs:screenshot').toBe(true);
              const record = readFileSync(SCREENSHOT_RECORD, 'utf8')
                .split('\n')
                .filter((name) => name !== '');
              expect(record, 'reports/docs-page.png shows other response headers than the service sends: npm run docs:screenshot').toEqual(
                shown,
              );
            }
          }
          await page.context().close();
        },
      );
    });
  }
});

describe.skipIf(skipBrowser)('docs page in headless Chromium, CDN reachable (served by the test from the same package files)', () => {
  let browser: Browser;
  let service: EmbeddedService;
  beforeAll(async () => {
    [browser, service] = await Promise.all([launchChromium(), startEmbedded('orders-grpc')]);
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), service?.stop()]);
  });

  /** What jsDelivr would answer for swagger-ui-dist@<installed version>, optionally altered. */
  function fakeCdn(alter: (body: Buffer) => Buffer) {
    return (url: URL) => {
      const asset = SWAGGER_ASSETS.find((candidate) => url.origin === SWAGGER_CDN_ORIGIN && url.pathname.endsWith(`/${candidate.name}`));
      return asset === undefined ? undefined : { body: alter(asset.body), contentType: asset.contentType };
    };
  }

  it(
    'uses the CDN files, passes their integrity check and the CSP, and never asks the service for its copy',
    { timeout: BROWSER_TEST_TIMEOUT_MS },
    async () => {
      const { page, requested, problems } = await openDocs(
        browser,
        service,
        fakeCdn((body) => body),
      );
      expect(requested.filter((url) => url.startsWith(SWAGGER_CDN_ORIGIN))).toHaveLength(SWAGGER_ASSETS.length);
      for (const path of ASSET_PATHS) expect(requested).not.toContain(`${service.baseUrl}${path}`);
      expect(await renderedOperations(page)).toHaveLength(openapiOperations().length);
      expect(problems).toEqual([]);
      await page.context().close();
    },
  );

  it(
    'refuses altered CDN files (Subresource Integrity) and falls back to the served copy',
    { timeout: BROWSER_TEST_TIMEOUT_MS },
    async () => {
      const { page, requested, problems } = await openDocs(
        browser,
        service,
        fakeCdn((body) => Buffer.concat([body, Buffer.from('\n/* altered */\n')])),
      );
      for (const path of ASSET_PATHS) expect(requested).toContain(`${service.baseUrl}${path}`);
      expect(await renderedOperations(page)).toHaveLength(openapiOperations().length);
      expect(problems).toEqual([]);
      await page.context().close();
    },
  );
});
