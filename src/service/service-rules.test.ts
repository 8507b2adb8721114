import { describe, expect, it } from 'vitest';
import { LogCapture } from '../../test/support/log-capture.ts';
import { createEmbeddedBackends } from '../../embedded/backends.ts';
import { DomainError, ErrForbidden, ErrInvalidCredentials, ErrValidation } from '../domain/errors.ts';
import { validateNewOrder } from '../domain/order.ts';
import { sessionKeyFromVerifiedSubject as key } from '../domain/session-key.ts';
import { createLogger } from '../observability/logger.ts';
import { SessionScope } from '../session/scope.ts';
import { decodeCreateOrderRequest } from '../transports/http/rest/dto.ts';
import { AuthService } from './auth-service.ts';
import { OrderService } from './order-service.ts';
import { hashPassword, verifyPassword } from './password-hasher.ts';
import { TokenService } from './token-service.ts';

// Rule-tagged checks of where a rule lives (spec 5, 6, 7): `[RULE-ID]` in a test name is a conformance case.
const logger = createLogger('error', new LogCapture());
const signal = new AbortController().signal;

describe('service-layer rules', () => {
  it('[AUTHZ-service-layer, ERR-forbidden] the owner check is the service raising a transport-free ErrForbidden', async () => {
    const backends = await createEmbeddedBackends(logger, { seedDemoUsers: false });
    const sessions = new SessionScope({ recentCapacity: 10, logger });
    const service = new OrderService({ repository: backends.repository, cache: backends.cache, sessions, logger });
    const principal = (userId: string) => ({ userId, claims: { sub: userId, name: userId, iat: 0, exp: 0 }, sessionKey: key(userId) });
    const order = await service.create({ principal: principal('owner'), signal }, 'x', 1);
    const error = await service.get({ principal: principal('intruder'), signal }, order.id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ErrForbidden);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).not.toHaveProperty('status');
    expect(error).not.toHaveProperty('code');
    await sessions.stop();
  });

  it('[ERR-quantity-domain, ERR-validation] the quantity rule lives in the domain only, not in the HTTP decoder', () => {
    for (const quantity of [0, -1]) {
      expect(() => validateNewOrder({ userId: 'u', item: 'x', quantity })).toThrow(ErrValidation);
      expect(() => decodeCreateOrderRequest(JSON.stringify({ item: 'x', quantity }))).not.toThrow();
    }
  });

  it('[SVC-credential-store, AUTH-10-credentials] credentials are scrypt hashes; unknown user and wrong password look alike', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[\w-]+\$[\w-]+$/);
    expect(hash).not.toContain('correct horse');
    expect([await verifyPassword('correct horse', hash), await verifyPassword('wrong', hash)]).toEqual([true, false]);
    const backends = await createEmbeddedBackends(logger, { seedDemoUsers: false });
    await backends.credentials.add({ id: 'u-1', username: 'known', passwordHash: await hashPassword('pw', { N: 1024, r: 8, p: 1 }) });
    const auth = new AuthService(backends.credentials, new TokenService('x'.repeat(32), 60_000));
    const unknown = await auth.login('unknown', 'pw').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    const wrong = await auth.login('known', 'nope').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(unknown).toBeInstanceOf(ErrInvalidCredentials);
    expect(wrong).toBeInstanceOf(ErrInvalidCredentials);
    expect(unknown?.message).toBe(wrong?.message);
  });
});
