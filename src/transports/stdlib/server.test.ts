import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryOrderCache } from '../../../fakes/memory-cache.ts';
import { MemoryStore } from '../../../fakes/memory-store.ts';
import { createLogger } from '../../observability/logger.ts';
import { HttpMetrics } from '../../observability/metrics.ts';
import { Tracing } from '../../observability/tracer.ts';
import { AuthService } from '../../service/auth-service.ts';
import { OrderService } from '../../service/order-service.ts';
import { TokenService } from '../../service/token-service.ts';
import { SessionScope } from '../../session/scope.ts';
import { type RateLimitDecision, TokenBucketLimiter } from '../../rate-limit/store.ts';
import type { Core } from '../transport.ts';
import { createStdlibHandler } from './server.ts';

/** A limiter that can be made to throw (a panic in a layer other than the router) or to refuse. */
class SwitchableLimiter extends TokenBucketLimiter {
  mode: 'allow' | 'throw' | 'refuse' = 'allow';
  override take(key: string): RateLimitDecision {
    if (this.mode === 'throw') throw new TypeError('limiter exploded');
    if (this.mode === 'refuse') return { allowed: false, limit: 1000, retryAfterSeconds: 3, remaining: 0, resetSeconds: 3, atMs: 0 };
    return super.take(key);
  }
}

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/**
 * The stdlib chain with every observer writing into one sequence, so the order in which the layers
 * finish (innermost first) shows their nesting.
 */
async function start(): Promise<{
  url: string;
  sequence: string[];
  limiter: SwitchableLimiter;
  lines: Record<string, unknown>[];
  routes: (string | undefined)[];
}> {
  const sequence: string[] = [];
  const routes: (string | undefined)[] = [];
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('debug', {
    write(text: string) {
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      sequence.push(`log:${String(line['msg'])}`);
    },
  });
  const recorder: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (span: ReadableSpan) => void sequence.push(`span:${String(span.attributes['http.response.status_code'])}`),
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  const metrics = new HttpMetrics();
  const observe = metrics.observe.bind(metrics);
  metrics.observe = (method, route, status, seconds) => {
    sequence.push(`metrics:${status}`);
    routes.push(route);
    observe(method, route, status, seconds);
  };
  const store = new MemoryStore();
  const tokens = new TokenService('a-test-signing-secret-of-32-bytes!!', 3_600_000);
  const orders = new OrderService({
    repository: store,
    cache: new MemoryOrderCache(),
    sessions: new SessionScope({ recentCapacity: 10, logger }),
    logger,
  });
  const limiter = new SwitchableLimiter(1000);
  // The core fields the REST side reads (http/rest/api.ts restParts); the rest of Core is not used.
  const core = {
    config: { trustProxy: [] },
    logger,
    tokens,
    auth: new AuthService(store, tokens),
    orders,
    tracer: new Tracing({ serviceName: 'chain-test', otlpEndpoint: '', processors: [recorder] }).tracer,
    metrics,
    rateLimits: { local: limiter },
  } as unknown as Core;
  const handler = createStdlibHandler(core);
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sequence, limiter, lines, routes };
}

describe('stdlib chain order (spec 4.3): recovery, tracing, metrics, request logging, rate limiter, router', () => {
  it.each([
    ['an ordinary request: request log, then metrics, then span', 'allow', 401, {}],
    ['a refused request is logged and measured as 429 (the limiter is inside the observers)', 'refuse', 429, { 'retry-after': '3' }],
  ] as const)('%s', async (_label, mode, status, headers) => {
    const { url, sequence, limiter } = await start();
    limiter.mode = mode;
    const response = await fetch(`${url}/orders`);
    expect(response.status).toBe(status);
    for (const [name, value] of Object.entries(headers)) expect(response.headers.get(name)).toBe(value);
    expect(sequence).toStrictEqual(['log:request', `metrics:${status}`, `span:${status}`]);
  });

  it('[METRICS-429-route] a refused request is counted under the route it addressed, and one of a path no route has under none (unmatched)', async () => {
    const { url, sequence, limiter, routes } = await start();
    limiter.mode = 'refuse';
    expect((await fetch(`${url}/orders/7c9e6679-7425-40de-944b-e07fc1f90ae7`)).status).toBe(429);
    expect((await fetch(`${url}/no-such-route`)).status).toBe(429);
    expect(routes).toStrictEqual(['GET /orders/{id}', 'unmatched']);
    expect(sequence.filter((entry) => entry.startsWith('metrics:'))).toStrictEqual(['metrics:429', 'metrics:429']);
  });

  it('a panic outside the router (in the rate limiter) is recovered by the outermost layer, after every observer saw the 500', async () => {
    const { url, sequence, limiter, lines } = await start();
    limiter.mode = 'throw';
    const response = await fetch(`${url}/orders`);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toStrictEqual({ error: 'internal server error' });
    expect(sequence).toStrictEqual(['log:request', 'metrics:500', 'span:500', 'log:api: panic recovered']);
    expect(lines.find((l) => l['msg'] === 'api: panic recovered')).toMatchObject({
      level: 'error',
      panic: 'limiter exploded',
      path: '/orders',
    });
  });
});
