import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Debian's `chromium` package (`.ci/run` installs it); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const chromiumInstalled = existsSync(CHROMIUM_PATH);

/**
 * Nothing in the browser may reach the network on its own: no field trials, component or safe-browsing
 * updates, sync or first-run pings, and no QUIC; and no name but the loopback resolves, so not even a
 * speculative preconnect to the CDN leaves the machine. `launch` gives every browser a fresh temporary
 * --user-data-dir (removed on close); Playwright refuses that flag in `args`.
 */
const OFFLINE_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: OFFLINE_FLAGS });
}

/**
 * Every request leaving the page goes through `handle`: the loopback service is passed on, anything
 * else gets what `offsite` decides (by default the answer of a machine with no network), so the test
 * is offline even on a CI runner that has one. Every URL is recorded.
 */
export async function offlineContext(
  browser: Browser,
  offsite: (url: URL) => { readonly body: Buffer; readonly contentType: string } | undefined = () => undefined,
): Promise<{ readonly context: BrowserContext; readonly requested: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const requested: string[] = [];
  await context.route(
    () => true,
    (route) => {
      const url = new URL(route.request().url());
      requested.push(url.href);
      if (url.hostname === '127.0.0.1') return route.continue();
      const served = offsite(url);
      if (served === undefined) return route.abort('internetdisconnected');
      return route.fulfill({
        status: 200,
        body: served.body,
        headers: { 'content-type': served.contentType, 'access-control-allow-origin': '*' },
      });
    },
  );
  return { context, requested };
}
