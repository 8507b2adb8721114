import { createServer, request, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryOrderCache } from '../../../../fakes/memory-cache.ts';
import { MemoryStore } from '../../../../fakes/memory-store.ts';
import { LogCapture } from '../../../../test/support/log-capture.ts';
import { until } from '../../../../test/support/eventually.ts';
import { listenLocal } from '../../../../test/support/ports.ts';
import { ErrValidation } from '../../../domain/errors.ts';
import { sessionKeyFromVerifiedSubject } from '../../../domain/session-key.ts';
import { createLogger } from '../../../observability/logger.ts';
import { HttpMetrics } from '../../../observability/metrics.ts';
import { Tracing } from '../../../observability/tracer.ts';
import { bucketDecision, TokenBucketLimiter, type RateLimitStore } from '../../../rate-limit/store.ts';
import { AuthService } from '../../../service/auth-service.ts';
import type { Principal } from '../../../service/authenticate.ts';
import { LoginGate } from '../../../service/login-gate.ts';
import { OrderService } from '../../../service/order-service.ts';
import { TokenService } from '../../../service/token-service.ts';
import { SessionScope } from '../../../session/scope.ts';
import { createStdlibHandler } from '../../stdlib/server.ts';
import type { Core } from '../../transport.ts';
import { RestApi, type RestRequest } from './api.ts';

const ALICE = '11111111-1111-4111-8111-111111111111';
const INVALID_KEY = 'invalid Idempotency-Key header (expected a quoted string of 1 to 255 printable ASCII characters)';

function api(): { api: RestApi; store: MemoryStore } {
  const store = new MemoryStore();
  const logger = createLogger('info', new LogCapture());
  const orders = new OrderService({
    repository: store,
    cache: new MemoryOrderCache(),
    sessions: new SessionScope({ recentCapacity: 10, logger }),
    logger,
  });
  return { api: new RestApi(new AuthService(store, new TokenService('a-test-signing-secret-of-32-bytes!!', 3_600_000)), orders), store };
}

const alice: Principal = {
  userId: ALICE,
  claims: { sub: ALICE, name: 'alice', iat: 0, exp: 0 },
  sessionKey: sessionKeyFromVerifiedSubject(ALICE),
};

/** A create request as a transport hands it over; `headers` left out when undefined (RestRequest.headers is optional). */
function createRequest(headers?: RestRequest['headers']): RestRequest {
  return {
    params: {},
    query: new URLSearchParams(),
    readBody: () => Promise.resolve('{"item":"widget","quantity":1}'),
    client: '127.0.0.1',
    signal: new AbortController().signal,
    ...(headers === undefined ? {} : { headers }),
  };
}

describe('RestApi.createOrder: the Idempotency-Key header', () => {
  it('[IDEM-replay] a request without headers at all is an ordinary create without a key', async () => {
    const { api: rest } = api();
    const first = await rest.createOrder(createRequest(), alice);
    const second = await rest.createOrder(createRequest(), alice);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect((second.body as { id: string }).id).not.toBe((first.body as { id: string }).id);
  });

  it('[IDEM-format] a repeated header handed over as a list is refused (400 by the error table), never read as one key', async () => {
    const { api: rest } = api();
    // Each value alone is a valid bare key, and so would be their concatenation.
    const refused = rest.createOrder(createRequest({ 'idempotency-key': ['k1', 'k2'] }), alice);
    await expect(refused).rejects.toBeInstanceOf(ErrValidation);
    await expect(refused).rejects.toThrow(INVALID_KEY);
    expect((await rest.createOrder(createRequest({ 'idempotency-key': 'k1k2' }), alice)).status).toBe(201);
  });
});

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** The core fields restParts reads (through orders-stdlib's handler); the rest of Core is not used by the REST side. */
function core(shared: RateLimitStore | undefined, options: { logs?: LogCapture; gate?: LoginGate } = {}): Core {
  const logger = createLogger('info', options.logs ?? new LogCapture());
  const store = new MemoryStore();
  const tokens = new TokenService('a-test-signing-secret-of-32-bytes!!', 3_600_000);
  return {
    config: { trustProxy: [] },
    logger,
    tokens,
    auth: new AuthService(store, tokens, options.gate),
    orders: new OrderService({
      repository: store,
      cache: new MemoryOrderCache(),
      sessions: new SessionScope({ recentCapacity: 10, logger }),
      logger,
    }),
    tracer: new Tracing({ serviceName: 'rest-parts-test', otlpEndpoint: '' }).tracer,
    metrics: new HttpMetrics(),
    // A local bucket that never refuses: a 429 can only come from the shared store.
    rateLimits: { local: new TokenBucketLimiter(1000), ...(shared === undefined ? {} : { shared }) },
  } as unknown as Core;
}

/** A shared store whose budget is spent: every take is refused. */
class SpentSharedStore implements RateLimitStore {
  readonly keys: string[] = [];
  take(key: string) {
    this.keys.push(key);
    return bucketDecision(false, 0, 1, 1, 0);
  }
}

async function statusOfGetOrders(shared: RateLimitStore | undefined): Promise<number> {
  server = createServer(createStdlibHandler(core(shared)));
  const port = await listenLocal(server);
  return (await fetch(`http://127.0.0.1:${port}/orders`)).status;
}

describe('restParts: the REST rate limiter over the core buckets', () => {
  it('[LIMIT-rate-store] with RATE_LIMIT_STORE=redis the shared store decides, keyed by the client', async () => {
    const shared = new SpentSharedStore();
    expect(await statusOfGetOrders(shared)).toBe(429);
    expect(shared.keys).toStrictEqual(['127.0.0.1']);
  });

  it('[LIMIT-rate-store] without a shared store the process bucket decides', async () => {
    expect(await statusOfGetOrders(undefined)).toBe(401);
  });
});

describe('a login whose client went away while it waited in the login gate', () => {
  it('[LOGIN-gate, ERR-500-panic] is a 499 in the request log, never a recovered panic', async () => {
    const logs = new LogCapture();
    const gate = new LoginGate({ concurrency: 1, queuePerClient: 2, queueTotal: 8 });
    server = createServer(createStdlibHandler(core(undefined, { logs, gate })));
    const port = await listenLocal(server);
    const body = JSON.stringify({ username: 'nobody', password: 'wrong' });
    const login = () =>
      request({ port, host: '127.0.0.1', method: 'POST', path: '/auth/login', headers: { 'content-type': 'application/json' } });
    // One login runs (a full-cost derivation for an unknown user); the second waits behind it.
    const running = login();
    const answered = new Promise<number>((resolve) => running.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0))));
    running.end(body);
    const waiting = login();
    waiting.on('error', () => undefined);
    waiting.end(body);
    await until(() => gate.load.waiting === 1, 'the second login queued');
    waiting.destroy();
    expect(await answered).toBe(401);
    await until(() => logs.find('request').length === 2, 'both request lines');
    expect(logs.find('request').map((line) => line['status'])).toContain(499);
    expect(logs.find('api: panic recovered')).toStrictEqual([]);
  });
});
