/**
 * The docs page at GET /swagger/ (spec 4.1): Swagger UI from a CDN, pinned to the installed swagger-ui-dist
 * with Subresource Integrity, falling back to the same files under /swagger/assets/ when the CDN is out of
 * reach (rule SWAGGER-offline-fallback).
 */
import { createHash } from 'node:crypto';
import { SWAGGER_BUNDLE, SWAGGER_CSS, SWAGGER_UI_VERSION } from './swagger-assets.ts';
import type { StaticReply } from './static-reply.ts';

export const SWAGGER_CDN_ORIGIN = 'https://cdn.jsdelivr.net';
const CDN = `${SWAGGER_CDN_ORIGIN}/npm/swagger-ui-dist@${SWAGGER_UI_VERSION}`;

// Relative to /swagger/, so both survive a proxy mounting the listener under a path prefix.
export const SWAGGER_ASSETS_URL = 'assets/';
const SWAGGER_DOCUMENT_URL = '../openapi.yaml';

/**
 * The only inline script, allowed by its hash in the CSP. Parser-inserted, it runs once the elements before
 * it loaded or failed: a failed style sheet has no rules, a failed bundle defines no SwaggerUIBundle. Each
 * missing file is loaded from this service with the same integrity value. `validatorUrl: null`: no badge
 * from validator.swagger.io (the CSP would refuse it).
 */
const INIT_SCRIPT = `
      (function () {
        function start() {
          window.ui = SwaggerUIBundle({ url: '${SWAGGER_DOCUMENT_URL}', dom_id: '#swagger-ui', validatorUrl: null });
        }
        function fallback(cdnElement, name, onload) {
          var local = document.createElement(cdnElement.tagName);
          local.integrity = cdnElement.integrity;
          if (local.tagName === 'LINK') {
            local.rel = 'stylesheet';
            local.href = '${SWAGGER_ASSETS_URL}' + name;
          } else {
            local.onload = onload;
            local.onerror = function () {
              document.getElementById('swagger-ui').textContent = 'Swagger UI could not be loaded from the CDN or from this service.';
            };
            local.src = '${SWAGGER_ASSETS_URL}' + name;
          }
          cdnElement.after(local);
        }
        function loaded(link) {
          try {
            return link.sheet !== null && link.sheet.cssRules.length > 0;
          } catch (error) {
            return false;
          }
        }
        var css = document.getElementById('swagger-ui-css');
        if (!loaded(css)) fallback(css, '${SWAGGER_CSS.name}');
        if (typeof window.SwaggerUIBundle === 'function') start();
        else fallback(document.getElementById('swagger-ui-bundle'), '${SWAGGER_BUNDLE.name}', start);
      })();
    `;

const INIT_SCRIPT_HASH = `'sha256-${createHash('sha256').update(INIT_SCRIPT).digest('base64')}'`;

/**
 * Rule SWAGGER-csp: scripts and styles from the CDN and 'self' only, plus the inline script by hash; Try it
 * out calls only this service; `data:` images are swagger-ui.css's icons; no framing (no clickjacking).
 */
const SWAGGER_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${SWAGGER_CDN_ORIGIN} 'self' ${INIT_SCRIPT_HASH}`,
  `style-src ${SWAGGER_CDN_ORIGIN} 'self'`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SWAGGER_PAGE_HTML: string = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Order service API</title>
    <link rel="stylesheet" href="${CDN}/${SWAGGER_CSS.name}" integrity="${SWAGGER_CSS.integrity}" crossorigin="anonymous" id="swagger-ui-css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${CDN}/${SWAGGER_BUNDLE.name}" integrity="${SWAGGER_BUNDLE.integrity}" crossorigin="anonymous" id="swagger-ui-bundle"></script>
    <script>${INIT_SCRIPT}</script>
  </body>
</html>
`;

/** `no-cache`: an upgrade's new integrity values are seen at once; `no-referrer`: the CDN is not told where the service runs. */
export const SWAGGER_PAGE_REPLY: StaticReply = {
  status: 200,
  headers: {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': SWAGGER_PAGE_CSP,
    'cache-control': 'no-cache',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  },
  body: SWAGGER_PAGE_HTML,
};
