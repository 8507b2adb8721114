import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SWAGGER_ASSETS, SWAGGER_BUNDLE, SWAGGER_UI_VERSION, swaggerAssetReply } from './swagger-assets.ts';
import { SWAGGER_PAGE_HTML } from './swagger-page.ts';

describe('Swagger UI assets (rules SWAGGER-offline-fallback, SWAGGER-assets)', () => {
  it('come from a production dependency pinned to one exact version, the one the CDN URL names', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies['swagger-ui-dist']).toBe(SWAGGER_UI_VERSION);
    for (const asset of SWAGGER_ASSETS) {
      expect(SWAGGER_PAGE_HTML).toContain(
        `https://cdn.jsdelivr.net/npm/swagger-ui-dist@${SWAGGER_UI_VERSION}/${asset.name}" integrity="${asset.integrity}"`,
      );
    }
  });

  it('carry a strong ETag cut from the digest of their bytes, so it changes with them', () => {
    for (const asset of SWAGGER_ASSETS) {
      const digest = asset.integrity.slice('sha384-'.length);
      expect(asset.etag).toBe(`"${digest.slice(0, 32)}"`);
    }
  });

  it('answer 304 to a matching If-None-Match (weak, listed or *) and 200 otherwise', () => {
    const etag = SWAGGER_BUNDLE.etag;
    const cached = { etag, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };
    for (const header of [etag, `W/${etag}`, `"x", ${etag}`, '*'])
      expect(swaggerAssetReply(SWAGGER_BUNDLE, header)).toStrictEqual({ status: 304, headers: cached, body: '' });
    for (const header of [undefined, '"x"', etag.slice(0, -2) + '"', `"W/${etag.slice(1)}`]) {
      const reply = swaggerAssetReply(SWAGGER_BUNDLE, header);
      expect(reply).toMatchObject({ status: 200, headers: { ...cached, 'content-type': 'text/javascript; charset=utf-8' } });
      // Buffer.equals, not toMatchObject: expect compares a Buffer byte by byte, seconds for the 1.4 MB bundle.
      expect(Buffer.isBuffer(reply.body) && reply.body.equals(SWAGGER_BUNDLE.body)).toBe(true);
    }
  });
});
