import { afterEach, describe, expect, it } from 'vitest';
import type { Core, TransportFactory } from '../../src/composition/create-app.ts';
import type { RestApi } from '../../src/transports/http/rest-api.ts';
import { koaTransport } from '../../src/transports/koa/koa-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { call, login } from './koa-client.ts';

/** orders-koa with one business operation replaced by a throwing one: a genuinely unexpected failure. */
function withThrowingGetOrder(error: unknown): TransportFactory {
  return (core: Core) => {
    const api = Object.create(core.api) as { -readonly [K in keyof RestApi]: RestApi[K] };
    api.getOrder = async () => {
      throw error;
    };
    return koaTransport({ ...core, api: api as RestApi });
  };
}

describe('orders-koa handling chain (spec 4.3, 4.5, 8)', () => {
  let app: InProcessApp | undefined;
  afterEach(async () => {
    await app?.stop();
    app = undefined;
  });

  it('limits each client to RATE_LIMIT_RPS requests per second with a JSON 429', async () => {
    app = await startInProcess({ transport: koaTransport, env: { RATE_LIMIT_RPS: '3' } });
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${app.baseUrl}/nope`);
      statuses.push(res.status);
      if (res.status === 429) limited ??= res;
      else await res.arrayBuffer();
      if (i === 0) {
        expect(res.headers.get('x-ratelimit-limit')).toBe('3');
        expect(res.headers.get('x-ratelimit-remaining')).toBe('2');
      }
    }
    expect(statuses).toEqual([404, 404, 404, 429, 429]);
    expect(limited?.headers.get('content-type')).toBe('application/json');
    expect(limited?.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(limited?.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(0);
    expect(await limited?.json()).toEqual({ error: 'rate limit exceeded' });
    // The limiter wraps the whole router, so a refused request is still observed by the outer layers.
    expect(app.logs.find('request').filter((l) => l['status'] === 429)).toHaveLength(2);
    // A new window, a new budget.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await call(app.baseUrl, 'GET', '/nope')).status).toBe(404);
  });

  it('masks a backend failure as 500 and logs it once as a backend outage, not a panic', async () => {
    app = await startInProcess({ transport: koaTransport });
    const token = await login(app.baseUrl, 'alice', await app.addUser('alice'));
    app.fakes?.store.trouble.failNext();
    const res = await call(app.baseUrl, 'POST', '/orders', { token, body: JSON.stringify({ item: 'x', quantity: 1 }) });
    expect(res).toMatchObject({ status: 500, body: { error: 'internal server error' } });
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(app.logs.find('api: panic recovered')).toHaveLength(0);
    const outages = app.logs.find('api: backend unavailable');
    expect(outages).toHaveLength(1);
    expect(outages[0]).toMatchObject({ level: 'error', path: '/orders', err: expect.stringContaining('injected failure') });
    expect(app.logs.find('request').at(-1)).toMatchObject({ method: 'POST', path: '/orders', status: 500 });
  });

  it('recovers a genuinely unexpected throw in a handler', async () => {
    app = await startInProcess({ transport: withThrowingGetOrder(new TypeError('boom')) });
    const token = await login(app.baseUrl, 'alice', await app.addUser('alice'));
    const id = crypto.randomUUID();
    const res = await call(app.baseUrl, 'GET', `/orders/${id}`, { token });
    expect(res).toMatchObject({ status: 500, body: { error: 'internal server error' } });
    expect(app.logs.find('api: panic recovered')).toEqual([expect.objectContaining({ panic: 'boom', path: `/orders/${id}` })]);
    // The server keeps serving.
    expect((await call(app.baseUrl, 'GET', '/orders', { token })).status).toBe(200);
  });

  it('recovers a throw in another layer (the group authentication step)', async () => {
    const brokenTokens: TransportFactory = (core) =>
      koaTransport({
        ...core,
        tokens: Object.assign(Object.create(core.tokens) as Core['tokens'], {
          verify: () => {
            throw new RangeError('verifier broke');
          },
        }),
      });
    app = await startInProcess({ transport: brokenTokens });
    const res = await call(app.baseUrl, 'GET', '/me/recent', { token: 'anything' });
    expect(res).toMatchObject({ status: 500, body: { error: 'internal server error' } });
    expect(app.logs.find('api: panic recovered')).toEqual([expect.objectContaining({ panic: 'verifier broke', path: '/me/recent' })]);
  });

  it('labels metrics and spans with the route pattern, never the raw path', async () => {
    app = await startInProcess({ transport: koaTransport });
    const token = await login(app.baseUrl, 'alice', await app.addUser('alice'));
    const created = await call(app.baseUrl, 'POST', '/orders', { token, body: JSON.stringify({ item: 'x', quantity: 1 }) });
    const id = (created.body as { id: string }).id;
    await call(app.baseUrl, 'GET', `/orders/${id}`, { token });
    await call(app.baseUrl, 'GET', `/orders/${id}`); // 401 from the group step: still the route's label
    await call(app.baseUrl, 'GET', '/nope');
    await call(app.baseUrl, 'DELETE', `/orders/${id}`);

    const scrape = await (await fetch(`${app.adminUrl}/metrics`)).text();
    expect(scrape).toContain('orders_http_requests_total{method="GET",route="GET /orders/{id}",status="200"} 1');
    expect(scrape).toContain('orders_http_requests_total{method="GET",route="GET /orders/{id}",status="401"} 1');
    expect(scrape).toContain('orders_http_requests_total{method="POST",route="POST /orders",status="201"} 1');
    expect(scrape).toContain('orders_http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(scrape).toContain('orders_http_requests_total{method="DELETE",route="unmatched",status="405"} 1');
    expect(scrape).toMatch(/orders_http_request_duration_seconds_count\{method="GET",route="GET \/orders\/\{id\}"\} 2/);
    expect(scrape).not.toContain(id);
    expect(scrape).not.toContain('/nope');

    const spans = app.spans.getFinishedSpans();
    const get = spans.filter((s) => s.name === 'GET /orders/{id}');
    expect(get.map((s) => s.attributes['http.response.status_code']).sort()).toEqual([200, 401]);
    expect(get[0]?.attributes).toMatchObject({ 'http.request.method': 'GET', 'url.path': `/orders/${id}` });
    const unmatched = spans.filter((s) => s.name === 'http.request');
    expect(unmatched.map((s) => [s.attributes['http.request.method'], s.attributes['url.path'], s.attributes['http.response.status_code']])).toEqual([
      ['GET', '/nope', 404],
      ['DELETE', `/orders/${id}`, 405],
    ]);
    expect(spans.every((s) => s.spanContext().traceId !== '00000000000000000000000000000000')).toBe(true);
  });

  it('writes one request line per request with method, path and status, and never a body', async () => {
    app = await startInProcess({ transport: koaTransport });
    const password = await app.addUser('alice', 'very-secret-password');
    const token = await login(app.baseUrl, 'alice', password);
    await call(app.baseUrl, 'POST', '/orders', { token, body: JSON.stringify({ item: 'secret-item', quantity: 1 }) });
    await call(app.baseUrl, 'GET', '/nope');
    const lines = app.logs.find('request');
    expect(lines.map((l) => [l['method'], l['path'], l['status']])).toEqual([
      ['POST', '/auth/login', 200],
      ['POST', '/orders', 201],
      ['GET', '/nope', 404],
    ]);
    const everything = app.logs.raw.join('\n');
    expect(everything).not.toContain('very-secret-password');
    expect(everything).not.toContain(token);
    expect(lines.map((l) => JSON.stringify(l)).join('\n')).not.toContain('secret-item');
  });

  it('hands the operation a done signal that aborts when the response is over (spec 3.2 rule 2)', async () => {
    const seen: AbortSignal[] = [];
    const capturing: TransportFactory = (core) => {
      const api = Object.create(core.api) as { -readonly [K in keyof RestApi]: RestApi[K] };
      api.recent = async (req, principal) => {
        seen.push(req.signal);
        expect(req.signal.aborted).toBe(false);
        return core.api.recent(req, principal);
      };
      return koaTransport({ ...core, api: api as RestApi });
    };
    app = await startInProcess({ transport: capturing });
    const token = await login(app.baseUrl, 'alice', await app.addUser('alice'));
    expect((await call(app.baseUrl, 'GET', '/me/recent', { token })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.aborted).toBe(true);
  });
});
