import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { stdlibTransport } from '../../src/transports/stdlib/stdlib-transport.ts';
import { OPENAPI_YAML } from '../../src/transports/http/openapi-document.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';

const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const PASSWORD = 'correct-horse-battery-staple-9731';

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * node:http request for what fetch cannot do cleanly: a huge upload the server refuses mid-way, or a
 * chunked body. Errors after the response arrived (EPIPE/ECONNRESET while still uploading) are ignored.
 */
function raw(url: string, options: { method: string; headers?: Record<string, string>; chunks: Buffer[] }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    let answered = false;
    const client = request({ host: target.hostname, port: target.port, path: target.pathname, method: options.method, headers: options.headers });
    client.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
    });
    client.on('error', (error) => {
      if (!answered) reject(error);
    });
    (async () => {
      for (const chunk of options.chunks) {
        if (answered || client.destroyed) break;
        if (!client.write(chunk)) await new Promise((r) => client.once('drain', r).once('close', r));
      }
      client.end();
    })().catch(() => undefined);
  });
}

/** Sends a hand-written request line and returns the status line of the answer. */
function statusLine(port: number, requestLine: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${requestLine}\r\nhost: x\r\nconnection: close\r\n\r\n`));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (part: string) => (data += part));
    socket.on('close', () => resolve(data.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
    socket.setTimeout(3_000, () => socket.destroy(new Error(`no answer to ${requestLine}`)));
  });
}

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

describe('node:http transport', () => {
  let app: InProcessApp;
  let token: string;

  async function login(username = 'alice', password = PASSWORD): Promise<string> {
    const response = await fetch(`${app.baseUrl}/auth/login`, { method: 'POST', body: JSON.stringify({ username, password }) });
    expect(response.status).toBe(200);
    return (await json(response))['token'] as string;
  }

  async function createOrder(bearer = token): Promise<Record<string, unknown>> {
    const response = await fetch(`${app.baseUrl}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ item: 'widget', quantity: 2 }),
    });
    expect(response.status).toBe(201);
    return json(response);
  }

  beforeAll(async () => {
    app = await startInProcess({ transport: stdlibTransport });
    await app.addUser('alice', PASSWORD);
    await app.addUser('bob');
    token = await login();
  });
  afterAll(async () => {
    await app.stop();
  });
  beforeEach(() => {
    app.fakes!.cacheFake.trouble.up();
    app.fakes!.store.trouble.up();
    app.fakes!.bus.trouble.up();
  });

  describe('panic recovery (spec 4.3 rule 1)', () => {
    it('an unexpected throw gives 500 `internal server error`, one `api: panic recovered` line, and is still logged and measured as 500', async () => {
      const order = await createOrder();
      const store = app.fakes!.store;
      const cache = app.fakes!.cacheFake;
      const originalFind = store.findById.bind(store);
      const originalGet = cache.get.bind(cache);
      // A cache miss forces the repository read, which then fails with a plain programming error.
      cache.get = async () => undefined;
      store.findById = async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'rows')");
      };
      const before = app.logs.lines.length;
      try {
        const response = await fetch(`${app.baseUrl}/orders/${String(order['id'])}`, { headers: { authorization: `Bearer ${token}` } });
        expect(response.status).toBe(500);
        expect(response.headers.get('content-type')).toBe('application/json');
        expect(await json(response)).toStrictEqual({ error: 'internal server error' });
      } finally {
        store.findById = originalFind;
        cache.get = originalGet;
      }
      const lines = app.logs.lines.slice(before);
      const panics = lines.filter((l) => l.msg === 'api: panic recovered');
      expect(panics).toHaveLength(1);
      expect(panics[0]).toMatchObject({ level: 'error', panic: "Cannot read properties of undefined (reading 'rows')", path: `/orders/${String(order['id'])}` });
      expect(lines.filter((l) => l.msg === 'request')).toStrictEqual([expect.objectContaining({ method: 'GET', status: 500 })]);
      const scrape = await (await fetch(`${app.adminUrl}/metrics`)).text();
      expect(scrape).toMatch(/orders_http_requests_total\{method="GET",route="GET \/orders\/\{id\}",status="500"\} 1/);
    });

    it('a backend outage is a masked 500 logged as `api: backend unavailable`, not as a panic', async () => {
      app.fakes!.store.trouble.down();
      const before = app.logs.lines.length;
      const response = await fetch(`${app.baseUrl}/orders`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(500);
      expect(await json(response)).toStrictEqual({ error: 'internal server error' });
      const lines = app.logs.lines.slice(before);
      expect(lines.filter((l) => l.msg === 'api: panic recovered')).toHaveLength(0);
      expect(lines.filter((l) => l.msg === 'api: backend unavailable')).toStrictEqual([
        expect.objectContaining({ level: 'error', err: 'database: list orders: connection refused', path: '/orders' }),
      ]);
      expect(lines.find((l) => l.msg === 'request')).toMatchObject({ status: 500 });
    });

    it('a plain TypeError thrown by the cache is not a panic: the read degrades to the repository', async () => {
      const order = await createOrder();
      const cache = app.fakes!.cacheFake;
      const originalGet = cache.get.bind(cache);
      cache.get = async () => {
        throw new TypeError('cache client bug');
      };
      try {
        const response = await fetch(`${app.baseUrl}/orders/${String(order['id'])}`, { headers: { authorization: `Bearer ${token}` } });
        expect(response.status).toBe(200);
      } finally {
        cache.get = originalGet;
      }
    });
  });

  describe('request logging (spec 4.3 rule 2)', () => {
    it('one `request` line per request with method, path, status, and never a body, password, token or header', async () => {
      const before = app.logs.lines.length;
      const marker = 'body-marker-5e1f';
      const loggedIn = await fetch(`${app.baseUrl}/auth/login`, { method: 'POST', body: JSON.stringify({ username: 'alice', password: PASSWORD, note: marker }) });
      const freshToken = (await json(loggedIn))['token'] as string;
      const created = await fetch(`${app.baseUrl}/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${freshToken}` },
        body: JSON.stringify({ item: 'gizmo', quantity: 1, note: marker }),
      });
      expect(created.status).toBe(201);
      await fetch(`${app.baseUrl}/orders?limit=5`, { headers: { authorization: `Bearer ${freshToken}` } });
      await fetch(`${app.baseUrl}/auth/login`, { method: 'POST', body: JSON.stringify({ username: 'alice', password: `${PASSWORD}-wrong` }) });
      await fetch(`${app.baseUrl}/orders`, { headers: { authorization: `Bearer ${freshToken}x` } });
      const lines = app.logs.lines.slice(before);
      const requests = lines.filter((l) => l.msg === 'request');
      expect(requests.map((l) => [l.method, l.path, l.status])).toStrictEqual([
        ['POST', '/auth/login', 200],
        ['POST', '/orders', 201],
        ['GET', '/orders', 200],
        ['POST', '/auth/login', 401],
        ['GET', '/orders', 401],
      ]);
      for (const line of requests) expect(Object.keys(line).sort()).toStrictEqual(['level', 'method', 'msg', 'path', 'status', 'time']);
      const everything = app.logs.raw.join('\n');
      // The notifier's `order placed` line legitimately carries the item (spec 6 rule 2); nothing else of a body may appear.
      for (const secret of [PASSWORD, freshToken, freshToken.split('.')[2]!, app.jwtSecret, 'Bearer', marker, '"quantity"']) {
        expect(everything).not.toContain(secret);
      }
    });
  });

  describe('bodies', () => {
    it('a 2 MiB body with Content-Length is refused 413 `request body too large` before it is read', async () => {
      const body = Buffer.alloc(2 * 1024 * 1024, 'a');
      const response = await raw(`${app.baseUrl}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
        chunks: [body.subarray(0, 64 * 1024), body.subarray(64 * 1024)],
      });
      expect(response.status).toBe(413);
      expect(response.headers['content-type']).toBe('application/json');
      expect(JSON.parse(response.body)).toStrictEqual({ error: 'request body too large' });
    });

    it('a chunked 2 MiB body (no Content-Length) is refused 413 too, on a protected route', async () => {
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const response = await raw(`${app.baseUrl}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        chunks: Array.from({ length: 32 }, () => chunk),
      });
      expect(response.status).toBe(413);
      expect(JSON.parse(response.body)).toStrictEqual({ error: 'request body too large' });
    });

    it('a malformed body is 400 `malformed request body`', async () => {
      const response = await fetch(`${app.baseUrl}/auth/login`, { method: 'POST', body: '{"username":' });
      expect(response.status).toBe(400);
      expect(await json(response)).toStrictEqual({ error: 'malformed request body' });
    });
  });

  describe('routing', () => {
    it('a wrong method on a known path is 405 `method not allowed` with Allow', async () => {
      const onCollection = await fetch(`${app.baseUrl}/orders`, { method: 'DELETE' });
      expect(onCollection.status).toBe(405);
      expect(onCollection.headers.get('allow')?.split(', ').sort()).toStrictEqual(['GET', 'POST']);
      expect(await json(onCollection)).toStrictEqual({ error: 'method not allowed' });
      const onLogin = await fetch(`${app.baseUrl}/auth/login`);
      expect(onLogin.status).toBe(405);
      expect(onLogin.headers.get('allow')).toBe('POST');
      const onOrder = await fetch(`${app.baseUrl}/orders/0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b`, { method: 'PUT' });
      expect(onOrder.status).toBe(405);
      expect(onOrder.headers.get('allow')).toBe('GET');
    });

    it('an unknown path is 404 `not found`', async () => {
      const response = await fetch(`${app.baseUrl}/nope`);
      expect(response.status).toBe(404);
      expect(await json(response)).toStrictEqual({ error: 'not found' });
    });

    it('a request target that is no valid URL is a 404 on both listeners, and the process survives', async () => {
      for (const port of [app.port, app.adminPort]) {
        expect(await statusLine(port, 'GET http://[ HTTP/1.1')).toBe('HTTP/1.1 404 Not Found');
        expect(await statusLine(port, 'GET http://a:99999/ HTTP/1.1')).toBe('HTTP/1.1 404 Not Found');
      }
      expect((await fetch(`${app.baseUrl}/nope`)).status).toBe(404);
    });

    it('an origin-form target starting with // is a path, not a host', async () => {
      expect(await statusLine(app.port, 'GET //evil.example/orders HTTP/1.1')).toBe('HTTP/1.1 404 Not Found');
      expect(await statusLine(app.adminPort, 'GET //x/healthz HTTP/1.1')).toBe('HTTP/1.1 404 Not Found');
    });

    it.each(['/healthz', '/readyz', '/metrics'])('the public listener answers 404 for %s (spec 4.1 rule 2)', async (path) => {
      const response = await fetch(`${app.baseUrl}${path}`);
      expect(response.status).toBe(404);
      expect(await json(response)).toStrictEqual({ error: 'not found' });
    });

    it('every API response is application/json, success or error', async () => {
      const order = await createOrder();
      const auth = { authorization: `Bearer ${token}` };
      const calls: [string, RequestInit, number][] = [
        ['/auth/login', { method: 'POST', body: JSON.stringify({ username: 'alice', password: PASSWORD }) }, 200],
        ['/auth/login', { method: 'POST', body: JSON.stringify({ username: 'alice', password: 'no' }) }, 401],
        ['/auth/login', { method: 'POST', body: 'nope' }, 400],
        ['/orders', { method: 'POST', headers: auth, body: JSON.stringify({ item: 'x', quantity: 1 }) }, 201],
        ['/orders', { method: 'POST', headers: auth, body: JSON.stringify({ item: 'x', quantity: 0 }) }, 400],
        ['/orders', { method: 'POST', body: '{}' }, 401],
        [`/orders/${String(order['id'])}`, { headers: auth }, 200],
        ['/orders/not-a-uuid', { headers: auth }, 400],
        ['/orders/99999999-9999-4999-8999-999999999999', { headers: auth }, 404],
        ['/orders?limit=abc&offset=-1', { headers: auth }, 200],
        ['/me/recent', { headers: auth }, 200],
        ['/orders', { method: 'PATCH' }, 405],
        ['/nope', {}, 404],
      ];
      for (const [path, init, status] of calls) {
        const response = await fetch(`${app.baseUrl}${path}`, init);
        expect([path, response.status]).toStrictEqual([path, status]);
        expect([path, response.headers.get('content-type')]).toStrictEqual([path, 'application/json']);
        await response.arrayBuffer();
      }
    });
  });

  describe('contract documents', () => {
    it('GET /openapi.yaml serves the embedded document unchanged, and it parses', async () => {
      const response = await fetch(`${app.baseUrl}/openapi.yaml`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/yaml/);
      const text = await response.text();
      expect(text).toBe(OPENAPI_YAML);
      const document = parse(text) as { openapi: string; paths: Record<string, unknown> };
      expect(document.openapi).toMatch(/^3\./);
      expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/auth/login', '/orders', '/orders/{id}', '/me/recent']));
    });

    it('GET /swagger/ is an HTML page whose document URL resolves to /openapi.yaml', async () => {
      const response = await fetch(`${app.baseUrl}/swagger/`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await response.text();
      expect(html).toMatch(/^<!doctype html>/i);
      const documentUrl = /SwaggerUIBundle\(\{\s*url:\s*'([^']+)'/.exec(html)?.[1];
      expect(documentUrl).toBeDefined();
      expect(new URL(documentUrl!, `${app.baseUrl}/swagger/`).pathname).toBe('/openapi.yaml');
    });
  });

  describe('admin listener (spec 4.2)', () => {
    it('/healthz is 200 clean with database, cache and publisher ok', async () => {
      const response = await fetch(`${app.adminUrl}/healthz`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await json(response)).toStrictEqual({
        clean: true,
        nodes: [
          { name: 'database', status: 'ok' },
          { name: 'cache', status: 'ok' },
          { name: 'publisher', status: 'ok' },
        ],
      });
    });

    it('/healthz is 503 not clean when the cache is down, naming it with status and error', async () => {
      app.fakes!.cacheFake.trouble.down();
      const response = await fetch(`${app.adminUrl}/healthz`);
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toBe('application/json');
      const report = await json(response);
      expect(report['clean']).toBe(false);
      expect(report['nodes']).toStrictEqual([
        { name: 'database', status: 'ok' },
        { name: 'cache', status: 'unavailable', error: 'cache: connection refused' },
        { name: 'publisher', status: 'ok' },
      ]);
    });

    it('/readyz reports the api listener', async () => {
      const response = await fetch(`${app.adminUrl}/readyz`);
      expect(response.status).toBe(200);
      expect(await json(response)).toStrictEqual({ clean: true, nodes: [{ name: 'api', status: 'ok' }] });
    });

    it('/metrics: both metrics, route patterns and `unmatched`, never a raw id', async () => {
      const order = await createOrder();
      await fetch(`${app.baseUrl}/orders/${String(order['id'])}`, { headers: { authorization: `Bearer ${token}` } });
      await fetch(`${app.baseUrl}/no/such/${String(order['id'])}`);
      const response = await fetch(`${app.adminUrl}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      const scrape = await response.text();
      expect(scrape).toContain('orders_http_requests_total{');
      expect(scrape).toContain('orders_http_request_duration_seconds_bucket{');
      expect(scrape).toMatch(/orders_http_requests_total\{method="GET",route="GET \/orders\/\{id\}",status="200"\} \d+/);
      expect(scrape).toMatch(/orders_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
      expect(scrape).toMatch(/orders_http_requests_total\{method="POST",route="POST \/orders",status="201"\} \d+/);
      expect(scrape).not.toMatch(UUID_ANYWHERE);
      expect(scrape).not.toContain('/no/such');
    });

    it('unknown admin paths are 404', async () => {
      expect((await fetch(`${app.adminUrl}/nope`)).status).toBe(404);
      expect((await fetch(`${app.adminUrl}/orders`)).status).toBe(404);
    });
  });

  describe('tracing (spec 4.5)', () => {
    it('a matched request gets a span named by its route, with method, status and path attributes', async () => {
      const order = await createOrder();
      app.spans.reset();
      const path = `/orders/${String(order['id'])}`;
      expect((await fetch(`${app.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      const spans = app.spans.getFinishedSpans();
      expect(spans).toHaveLength(1);
      expect(spans[0]!.name).toBe('GET /orders/{id}');
      expect(spans[0]!.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 200, 'url.path': path });
      expect(spans[0]!.resource.attributes['service.name']).toBe('orders-test');
    });

    it('an unmatched request gets a span named `http.request`', async () => {
      app.spans.reset();
      await fetch(`${app.baseUrl}/nope`);
      const spans = app.spans.getFinishedSpans();
      expect(spans.map((s) => s.name)).toStrictEqual(['http.request']);
      expect(spans[0]!.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 404, 'url.path': '/nope' });
    });
  });
});

describe('node:http transport rate limiting', () => {
  let app: InProcessApp;
  beforeAll(async () => {
    app = await startInProcess({ transport: stdlibTransport, env: { RATE_LIMIT_RPS: '2' } });
  });
  afterAll(async () => {
    await app.stop();
  });

  it('beyond RATE_LIMIT_RPS a client gets 429 `rate limit exceeded` with Retry-After, as JSON', async () => {
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${app.baseUrl}/orders`);
      statuses.push(response.status);
      if (response.status === 429) refused ??= response;
      else await response.arrayBuffer();
    }
    expect(statuses.slice(0, 2)).toStrictEqual([401, 401]);
    expect(statuses).toContain(429);
    expect(refused!.headers.get('content-type')).toBe('application/json');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await json(refused!)).toStrictEqual({ error: 'rate limit exceeded' });
  });
});
