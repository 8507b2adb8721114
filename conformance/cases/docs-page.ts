import { createHash } from 'node:crypto';
import { flow, type Case, type FlowContext } from '../case-model.ts';
import { MSG, restCase } from './messages.ts';

/**
 * The docs page at /swagger/ (spec 4.1 table) and its offline fallback: the page, its
 * Content-Security-Policy and the two Swagger UI files served under /swagger/assets/. Black-box: every
 * expectation is read off what the target serves (the in-browser behaviour is test/docs).
 */

const PAGE = '/swagger/';
const ASSETS = '/swagger/assets/';

interface CdnElement {
  readonly url: URL;
  readonly integrity: string;
  /** The file name, which is also the name it is served under from /swagger/assets/. */
  readonly name: string;
}

interface DocsPage {
  readonly html: string;
  readonly csp: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly cdn: readonly CdnElement[];
}

async function fetchPage(t: FlowContext): Promise<DocsPage> {
  const reply = await t.driver.raw!({ method: 'GET', path: PAGE });
  t.check(reply, { http: { status: 200, contentType: 'text/html' } }, `GET ${PAGE}`);
  const html = reply.text ?? '';
  const cdn = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="(https:[^"]+)"[^>]*>/g)].map(([tag, href]) => {
    const url = new URL(href!);
    return { url, integrity: /\bintegrity="([^"]+)"/.exec(tag)?.[1] ?? '', name: url.pathname.split('/').pop() ?? '' };
  });
  return { html, csp: reply.headers?.['content-security-policy'], headers: reply.headers ?? {}, cdn };
}

function directives(csp: string): Map<string, string[]> {
  const parsed = new Map<string, string[]>();
  for (const part of csp.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name !== undefined && name !== '') parsed.set(name.toLowerCase(), sources);
  }
  return parsed;
}

function same(actual: readonly string[] | undefined, expected: readonly string[]): boolean {
  return JSON.stringify([...(actual ?? [])].sort()) === JSON.stringify([...expected].sort());
}

export const DOCS_PAGE_CASES: Case[] = [
  restCase(
    'swagger-page',
    ['SWAGGER-page', 'AUTH-9-public', 'SVC-two-listeners'],
    { method: 'GET', path: PAGE },
    { status: 200, contentType: 'text/html', textIncludes: ['<script src="https://', 'openapi.yaml'] },
  ),
  flow('swagger-page-csp-allows-the-cdn-and-self', ['SWAGGER-csp'], { api: 'rest' }, async (t) => {
    const page = await fetchPage(t);
    t.assert(page.csp !== undefined, `GET ${PAGE} sends no Content-Security-Policy`);
    const csp = directives(page.csp ?? '');
    const origins = [...new Set(page.cdn.map((element) => element.url.origin))];
    t.assert(origins.length === 1, `the page loads from ${origins.length} external origins (${origins.join(', ')}), expected the one CDN`);
    const allowed = [origins[0] ?? 'no CDN', "'self'"];
    const inlineScripts = [...page.html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
      ([, body]) =>
        `'sha256-${createHash('sha256')
          .update(body ?? '')
          .digest('base64')}'`,
    );
    const scriptSrc = csp.get('script-src') ?? [];
    t.assert(
      same(
        scriptSrc.filter((source) => !source.startsWith("'sha256-")),
        allowed,
      ),
      `script-src is ${scriptSrc.join(' ')}, expected exactly ${allowed.join(' ')} plus hashes`,
    );
    t.assert(
      same(
        scriptSrc.filter((source) => source.startsWith("'sha256-")),
        inlineScripts,
      ),
      `script-src hashes ${scriptSrc.join(' ')} are not exactly the page's ${inlineScripts.length} inline scripts ${inlineScripts.join(' ')}`,
    );
    t.assert(same(csp.get('style-src'), allowed), `style-src is ${csp.get('style-src')?.join(' ')}, expected exactly ${allowed.join(' ')}`);
    t.assert(
      same(csp.get('connect-src'), ["'self'"]),
      `connect-src is ${csp.get('connect-src')?.join(' ')}, expected 'self' (Try it out calls this service only)`,
    );
    t.assert(same(csp.get('default-src'), ["'none'"]), `default-src is ${csp.get('default-src')?.join(' ')}, expected 'none'`);
    t.assert(same(csp.get('frame-ancestors'), ["'none'"]), `frame-ancestors is ${csp.get('frame-ancestors')?.join(' ')}, expected 'none'`);
    t.assert(
      same(csp.get('img-src'), ["'self'", 'data:']),
      `img-src is ${csp.get('img-src')?.join(' ')}, expected 'self' data: (the icons inlined in swagger-ui.css)`,
    );
    for (const directive of ['base-uri', 'form-action'])
      t.assert(same(csp.get(directive), ["'none'"]), `${directive} is ${csp.get(directive)?.join(' ')}, expected 'none'`);
    // The CDN is not told where the service runs; a new page (new integrity values) is picked up after an upgrade.
    for (const [name, value] of [
      ['referrer-policy', 'no-referrer'],
      ['cache-control', 'no-cache'],
      ['x-content-type-options', 'nosniff'],
    ] as const)
      t.assert(page.headers[name] === value, `GET ${PAGE} sends ${name} ${String(page.headers[name])}, expected ${value}`);
    const markup = page.html.replace(/<script>[\s\S]*?<\/script>/g, '<script></script>');
    const inlineAttributes = markup.match(/\s(on\w+|style)=/g) ?? [];
    t.assert(
      inlineAttributes.length === 0 && !/<style\b/.test(markup),
      `the page has inline handlers or styles the CSP refuses: ${inlineAttributes.join(',')}`,
    );
  }),
  flow('swagger-assets-are-the-cdn-files', ['SWAGGER-offline-fallback', 'SWAGGER-assets'], { api: 'rest' }, async (t) => {
    const page = await fetchPage(t);
    const names = page.cdn.map((element) => element.name).sort();
    t.assert(
      JSON.stringify(names) === JSON.stringify(['swagger-ui-bundle.js', 'swagger-ui.css']),
      `the page's CDN files are ${names.join(', ')}`,
    );
    for (const element of page.cdn) {
      t.assert(
        /\/swagger-ui-dist@\d+\.\d+\.\d+\//.test(element.url.pathname),
        `${element.url.href} is not pinned to one swagger-ui-dist version`,
      );
      const path = `${ASSETS}${element.name}`;
      const reply = await t.driver.raw!({ method: 'GET', path });
      const type = element.name.endsWith('.js') ? 'text/javascript' : 'text/css';
      t.check(
        reply,
        {
          http: {
            status: 200,
            contentType: type,
            headers: { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', etag: /^"[^"]+"$/ },
          },
        },
        `GET ${path}`,
      );
      const digest = `sha384-${createHash('sha384')
        .update(reply.text ?? '', 'utf8')
        .digest('base64')}`;
      t.assert(
        digest === element.integrity,
        `${path} is not the file the page loads from the CDN: ${digest} vs integrity ${element.integrity}`,
      );

      const etag = reply.headers?.['etag'] ?? '';
      const revalidated = await t.driver.raw!({ method: 'GET', path, headers: { 'if-none-match': `"other", W/${etag}` } });
      t.check(revalidated, { http: { status: 304, headers: { etag } } }, `GET ${path} If-None-Match: its ETag`);
      t.assert((revalidated.text ?? '') === '', `304 for ${path} carries a body`);
      const changed = await t.driver.raw!({ method: 'GET', path, headers: { 'if-none-match': '"other"' } });
      t.check(changed, { http: { status: 200, contentType: type } }, `GET ${path} If-None-Match: another ETag`);
    }
  }),
  flow('swagger-assets-allow-list-only', ['SWAGGER-assets'], { api: 'rest' }, async (t) => {
    const refused = [
      'index.html',
      'package.json',
      'swagger-ui-bundle.js.map',
      'swagger-initializer.js',
      'SWAGGER-UI.CSS',
      'swagger-uiXcss',
      'swagger-ui.css/',
      '',
      '../../package.json',
      '..%2f..%2fpackage.json',
      '%2e%2e/%2e%2e/package.json',
      '%2e%2e%2f%2e%2e%2fopenapi.yaml',
      'swagger-ui.css%00.map',
    ];
    for (const name of refused) {
      const reply = await t.driver.raw!({ method: 'GET', path: `${ASSETS}${name}` });
      t.check(reply, { http: { status: 404, error: MSG.notFound } }, `GET ${ASSETS}${name}`);
    }
    const posted = await t.driver.raw!({
      method: 'POST',
      path: `${ASSETS}swagger-ui.css`,
      headers: { 'content-type': 'text/css' },
      body: 'x',
    });
    t.check(
      posted,
      { http: { status: 405, error: MSG.methodNotAllowed, headers: { allow: 'GET, HEAD' } } },
      `POST ${ASSETS}swagger-ui.css`,
    );
  }),
];
