import { describe, expect, it } from 'vitest';
import { MemoryOrderCache } from '../../../../fakes/memory-cache.ts';
import { MemoryStore } from '../../../../fakes/memory-store.ts';
import { LogCapture } from '../../../../test/support/log-capture.ts';
import { ErrValidation } from '../../../domain/errors.ts';
import { sessionKeyFromVerifiedSubject } from '../../../domain/session-key.ts';
import { createLogger } from '../../../observability/logger.ts';
import { AuthService } from '../../../service/auth-service.ts';
import type { Principal } from '../../../service/authenticate.ts';
import { OrderService } from '../../../service/order-service.ts';
import { TokenService } from '../../../service/token-service.ts';
import { SessionScope } from '../../../session/scope.ts';
import { RestApi, type RestRequest } from './rest-api.ts';

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
