/**
 * The two Swagger UI files of the docs page's offline fallback (rule SWAGGER-offline-fallback), read once
 * from the installed swagger-ui-dist (pinned exactly in package.json). The CDN URL names the installed
 * version and each integrity value is the digest of the installed bytes, so the browser runs a CDN file only
 * if it is byte for byte the one served here. Upgrading is `npm install --save-exact swagger-ui-dist@X`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { StaticReply } from './static-reply.ts';

const PACKAGE_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

export const SWAGGER_UI_VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string })
  .version;

export interface SwaggerAsset {
  /** File name in the package, and the last path segment it is served under. */
  readonly name: string;
  readonly contentType: string;
  readonly body: Buffer;
  /** `sha384-…`, for the integrity attribute of both the CDN and the local element. */
  readonly integrity: string;
  readonly etag: string;
}

function load(name: string, contentType: string): SwaggerAsset {
  const body = readFileSync(join(PACKAGE_DIR, name));
  const digest = createHash('sha384').update(body).digest('base64');
  return { name, contentType, body, integrity: `sha384-${digest}`, etag: `"${digest.slice(0, 32)}"` };
}

/** The allow-list: nothing else in the package (source maps, index.html, package.json) is reachable. */
export const SWAGGER_BUNDLE: SwaggerAsset = load('swagger-ui-bundle.js', 'text/javascript; charset=utf-8');
export const SWAGGER_CSS: SwaggerAsset = load('swagger-ui.css', 'text/css; charset=utf-8');
export const SWAGGER_ASSETS: readonly SwaggerAsset[] = [SWAGGER_BUNDLE, SWAGGER_CSS];

/** RFC 9110 13.1.2: `*` or a list of (possibly weak) entity tags, compared weakly. */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const candidate = tag.trim();
    return candidate === '*' || candidate.replace(/^W\//, '') === etag;
  });
}

export function swaggerAssetReply(asset: SwaggerAsset, ifNoneMatch: string | undefined): StaticReply {
  // Revalidated on every load: the URL has no version, and a stale file after an upgrade fails the page's integrity check.
  const headers = { etag: asset.etag, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };
  if (matchesEtag(ifNoneMatch, asset.etag)) return { status: 304, headers, body: '' };
  return { status: 200, headers: { ...headers, 'content-type': asset.contentType }, body: asset.body };
}
