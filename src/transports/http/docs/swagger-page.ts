import { createHash } from 'node:crypto';
import { SWAGGER_BUNDLE, SWAGGER_CSS, SWAGGER_UI_VERSION } from './swagger-assets.ts';
import type { StaticReply } from './static-reply.ts';

/**
 * The documentation page served at GET /swagger/. Spec 4.1: it loads its scripts from an external CDN,
 * pinned to the installed swagger-ui-dist version with Subresource Integrity. When the CDN is out of
 * reach (an offline developer, a locked-down network) the page falls back to the same files served by
 * this service under /swagger/assets/ (rule SWAGGER-offline-fallback).
 */
export { SWAGGER_UI_VERSION };

export const SWAGGER_CDN_ORIGIN = 'https://cdn.jsdelivr.net';
const CDN = `${SWAGGER_CDN_ORIGIN}/npm/swagger-ui-dist@${SWAGGER_UI_VERSION}`;

/** Relative to /swagger/, like the document URL, so both survive a proxy mounting the listener under a prefix. */
export const SWAGGER_ASSETS_URL = 'assets/';

/**
 * Relative, so it resolves to /openapi.yaml from /swagger/ and still works when a proxy mounts the
 * public listener under a path prefix.
 */
export const SWAGGER_DOCUMENT_URL = '../openapi.yaml';

/**
 * The page's only inline script, allowed by its hash in the Content-Security-Policy. A parser-inserted
 * script runs only after the script and style sheet elements before it have loaded or failed, so it can
 * tell which CDN file is missing: a failed style sheet has no rules (Chromium keeps an empty `sheet`;
 * a loaded one is readable, being fetched with CORS), a failed bundle defines no SwaggerUIBundle. Each
 * missing file is loaded from this service with the same integrity value, so it too must be the pinned one.
 * `validatorUrl: null`: no badge image fetched from validator.swagger.io (the CSP would refuse it).
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
 * Rule SWAGGER-csp: scripts and styles from exactly two origins, the CDN and this service ('self'),
 * plus the one inline script by hash; Try it out calls only this service. `img-src data:` is for the
 * icons inlined in swagger-ui.css. Everything else is refused (`default-src 'none'`), and the page cannot
 * be framed, so Try it out cannot be clickjacked.
 */
export const SWAGGER_PAGE_CSP = [
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

/**
 * `no-cache` so a browser picks up a new page (and with it new integrity values) after an upgrade;
 * `no-referrer` so the CDN is not told where the service runs.
 */
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
