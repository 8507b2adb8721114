/**
 * The documentation page served at GET /swagger/ (spec 4.1: it loads its scripts from an external CDN,
 * so the executable ships no UI assets). The version is pinned and each asset carries a Subresource
 * Integrity hash, so a changed file on the CDN is refused by the browser instead of run.
 * To upgrade: change SWAGGER_UI_VERSION and recompute both hashes from the package files
 * (`openssl dgst -sha384 -binary FILE | openssl base64 -A`).
 */
export const SWAGGER_UI_VERSION = '5.35.0';

const CDN = `https://cdn.jsdelivr.net/npm/swagger-ui-dist@${SWAGGER_UI_VERSION}`;
const CSS_INTEGRITY = 'sha384-WlYgdmXYOOBWL5apwjDEZwN+U3HmXSSu5R6V5aGxEcf7z+KuRNwBhoxKVN1i3D5I';
const BUNDLE_INTEGRITY = 'sha384-gjRm0bEPMeTmMh5jT2cHccIwCUZSTd8YC+j0d0sXw0MdGEfScduGpSyF3ZSSLkX9';

/**
 * Relative, so it resolves to /openapi.yaml from /swagger/ and still works when a proxy mounts the
 * public listener under a path prefix.
 */
export const SWAGGER_DOCUMENT_URL = '../openapi.yaml';

export const SWAGGER_PAGE_HTML: string = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Order service API</title>
    <link rel="stylesheet" href="${CDN}/swagger-ui.css" integrity="${CSS_INTEGRITY}" crossorigin="anonymous">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${CDN}/swagger-ui-bundle.js" integrity="${BUNDLE_INTEGRITY}" crossorigin="anonymous"></script>
    <script>
      window.ui = SwaggerUIBundle({ url: '${SWAGGER_DOCUMENT_URL}', dom_id: '#swagger-ui' });
    </script>
  </body>
</html>
`;
