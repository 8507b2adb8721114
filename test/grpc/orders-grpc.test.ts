import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { OrdersTestClient, timestampToDate, type CallResult, type WireOrder } from './grpc-test-client.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expectCode(result: CallResult<unknown>, code: status, message: string): void {
  expect(result.ok, 'call should fail').toBe(false);
  if (result.ok) return;
  expect({ code: status[result.error.code], details: result.error.details }).toEqual({ code: status[code], details: message });
}

describe('ordersv1.Orders over gRPC (spec 4.4)', () => {
  let app: InProcessApp;
  let client: OrdersTestClient;
  let aliceToken: string;
  let bobToken: string;

  beforeAll(async () => {
    app = await startInProcess({ transport: grpcTransport, serviceName: 'orders-grpc' });
    await app.addUser('alice');
    await app.addUser('bob');
    client = new OrdersTestClient(`127.0.0.1:${app.port}`);
    aliceToken = await client.login('alice', 'alice-password');
    bobToken = await client.login('bob', 'bob-password');
  });

  afterAll(async () => {
    client?.close();
    await app?.stop();
  });

  describe('happy paths', () => {
    it('Login needs no authorization metadata and returns a token the REST API accepts', async () => {
      const result = await client.call<{ token: string }>('Login', { username: 'alice', password: 'alice-password' });
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.value.token.split('.')).toHaveLength(3);
      const res = await fetch(`${app.baseUrl}/orders`, { headers: { authorization: `Bearer ${result.value.token}` } });
      expect(res.status).toBe(200);
    });

    it('CreateOrder returns the order with a Timestamp that round-trips to the REST created_at', async () => {
      const before = Date.now();
      const order = await client.ok<WireOrder>('CreateOrder', { item: 'widget', quantity: 3 }, { token: aliceToken });
      expect(order.id).toMatch(UUID);
      expect(order).toMatchObject({ item: 'widget', quantity: 3, status: 'pending' });
      expect(order.created_at).not.toBeNull();
      const createdAt = timestampToDate(order.created_at!);
      expect(createdAt.getTime()).toBeGreaterThanOrEqual(before - 5);
      expect(createdAt.getTime()).toBeLessThanOrEqual(Date.now() + 5);
      const rest = (await (await fetch(`${app.baseUrl}/orders/${order.id}`, { headers: { authorization: `Bearer ${aliceToken}` } })).json()) as Record<string, unknown>;
      expect(rest).toEqual({ id: order.id, item: 'widget', quantity: 3, status: 'pending', created_at: createdAt.toISOString() });
    });

    it('GetOrder returns the same fields as CreateOrder, also for an upper-case id', async () => {
      const created = await client.ok<WireOrder>('CreateOrder', { item: 'gadget', quantity: 1 }, { token: aliceToken });
      const fetched = await client.ok<WireOrder>('GetOrder', { id: created.id }, { token: aliceToken });
      expect(fetched).toEqual(created);
      expect(await client.ok<WireOrder>('GetOrder', { id: created.id.toUpperCase() }, { token: aliceToken })).toEqual(created);
    });

    it('ListOrders lists only the caller’s orders, newest first, with the REST clamps', async () => {
      await app.addUser('carol');
      const token = await client.login('carol', 'carol-password');
      const ids: string[] = [];
      for (let i = 0; i < 22; i++) ids.push((await client.ok<WireOrder>('CreateOrder', { item: `item-${i}`, quantity: i + 1 }, { token })).id);
      const newestFirst = [...ids].reverse();
      const list = async (request: object): Promise<string[]> =>
        (await client.ok<{ orders: WireOrder[] }>('ListOrders', request, { token })).orders.map((o) => o.id);
      expect(await list({})).toEqual(newestFirst.slice(0, 20)); // absent = 0 → default 20
      expect(await list({ limit: 0, offset: 0 })).toEqual(newestFirst.slice(0, 20));
      expect(await list({ limit: 101 })).toEqual(newestFirst.slice(0, 20));
      expect(await list({ limit: -5 })).toEqual(newestFirst.slice(0, 20));
      expect(await list({ limit: 100 })).toEqual(newestFirst);
      expect(await list({ limit: 3, offset: 2 })).toEqual(newestFirst.slice(2, 5));
      expect(await list({ limit: 3, offset: -7 })).toEqual(newestFirst.slice(0, 3));
      expect(await list({ limit: 5, offset: 50 })).toEqual([]);
      const full = await client.ok<{ orders: WireOrder[] }>('ListOrders', { limit: 1 }, { token });
      expect(full.orders[0]).toMatchObject({ id: newestFirst[0], item: 'item-21', quantity: 22, status: 'pending' });
      expect(full.orders[0]!.created_at).not.toBeNull();
    });

    it('ListOrders of a user without orders is an empty list', async () => {
      await app.addUser('dave');
      const token = await client.login('dave', 'dave-password');
      expect(await client.ok('ListOrders', {}, { token })).toEqual({ orders: [] });
    });

    it('Recent lists the orders the caller fetched, most recent first, without duplicates', async () => {
      await app.addUser('erin');
      const token = await client.login('erin', 'erin-password');
      expect(await client.ok('Recent', {}, { token })).toEqual({ recent: [] });
      const a = await client.ok<WireOrder>('CreateOrder', { item: 'a', quantity: 1 }, { token });
      const b = await client.ok<WireOrder>('CreateOrder', { item: 'b', quantity: 1 }, { token });
      await client.ok('GetOrder', { id: a.id }, { token });
      await client.ok('GetOrder', { id: b.id }, { token });
      await client.ok('GetOrder', { id: a.id }, { token });
      expect(await client.ok('Recent', {}, { token })).toEqual({ recent: [a.id, b.id] });
    });
  });

  describe('error codes through real calls (spec 7)', () => {
    it('Login with a wrong password or an unknown user → UNAUTHENTICATED invalid credentials', async () => {
      expectCode(await client.call('Login', { username: 'alice', password: 'nope' }), status.UNAUTHENTICATED, 'invalid credentials');
      expectCode(await client.call('Login', { username: 'nobody', password: 'x' }), status.UNAUTHENTICATED, 'invalid credentials');
      expectCode(await client.call('Login', {}), status.UNAUTHENTICATED, 'invalid credentials');
    });

    it('CreateOrder validation → INVALID_ARGUMENT with the domain text', async () => {
      expectCode(await client.call('CreateOrder', { item: 'x', quantity: 0 }, { token: aliceToken }), status.INVALID_ARGUMENT, 'quantity must be a positive integer');
      expectCode(await client.call('CreateOrder', { item: 'x', quantity: -4 }, { token: aliceToken }), status.INVALID_ARGUMENT, 'quantity must be a positive integer');
      expectCode(await client.call('CreateOrder', { item: '  ', quantity: 1 }, { token: aliceToken }), status.INVALID_ARGUMENT, 'item is required');
    });

    it('GetOrder with an id that is not a UUID → INVALID_ARGUMENT invalid order id', async () => {
      expectCode(await client.call('GetOrder', { id: 'not-a-uuid' }, { token: aliceToken }), status.INVALID_ARGUMENT, 'invalid order id');
      expectCode(await client.call('GetOrder', {}, { token: aliceToken }), status.INVALID_ARGUMENT, 'invalid order id');
    });

    it('GetOrder of an unknown order → NOT_FOUND', async () => {
      expectCode(await client.call('GetOrder', { id: crypto.randomUUID() }, { token: aliceToken }), status.NOT_FOUND, 'not found');
    });

    it('GetOrder of another user’s order → PERMISSION_DENIED (not NOT_FOUND, spec 7 rule 1)', async () => {
      const order = await client.ok<WireOrder>('CreateOrder', { item: 'private', quantity: 1 }, { token: aliceToken });
      expectCode(await client.call('GetOrder', { id: order.id }, { token: bobToken }), status.PERMISSION_DENIED, 'forbidden');
    });

    it('every protected method without authorization → UNAUTHENTICATED missing or malformed', async () => {
      const requests = { CreateOrder: { item: 'x', quantity: 1 }, GetOrder: { id: crypto.randomUUID() }, ListOrders: {}, Recent: {} } as const;
      for (const [method, request] of Object.entries(requests)) {
        expectCode(await client.call(method as keyof typeof requests, request), status.UNAUTHENTICATED, 'missing or malformed Authorization header');
      }
    });

    it('malformed authorization values → UNAUTHENTICATED missing or malformed (same rules as HTTP, spec 5 rules 3-4)', async () => {
      for (const authorization of [aliceToken, `bearer ${aliceToken}`, 'Bearer ', `Basic ${aliceToken}`]) {
        expectCode(await client.call('ListOrders', {}, { authorization }), status.UNAUTHENTICATED, 'missing or malformed Authorization header');
      }
    });

    it('a bad, foreign or tampered token → UNAUTHENTICATED invalid or expired token', async () => {
      const [header, payload] = aliceToken.split('.') as [string, string, string];
      for (const token of ['garbage', `${header}.${payload}.AAAA`, `${aliceToken}x`]) {
        expectCode(await client.call('Recent', {}, { token }), status.UNAUTHENTICATED, 'invalid or expired token');
      }
    });

    it('a backend failure → INTERNAL internal server error, cause logged once and never sent', async () => {
      const before = app.logs.find('grpc: internal error').length;
      app.fakes!.store.trouble.down('connection refused to db.internal:5432');
      try {
        const result = await client.call('CreateOrder', { item: 'x', quantity: 1 }, { token: aliceToken });
        expectCode(result, status.INTERNAL, 'internal server error');
        if (!result.ok) expect(JSON.stringify(result.error.metadata.getMap())).not.toContain('db.internal');
      } finally {
        app.fakes!.store.trouble.up();
      }
      const logged = app.logs.find('grpc: internal error').slice(before);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 'error', method: '/ordersv1.Orders/CreateOrder' });
      expect(String(logged[0]!['err'])).toContain('connection refused');
    });

    it('expected errors are not logged as internal errors', async () => {
      const before = app.logs.find('grpc: internal error').length;
      await client.call('GetOrder', { id: crypto.randomUUID() }, { token: aliceToken });
      await client.call('Recent', {});
      expect(app.logs.find('grpc: internal error')).toHaveLength(before);
    });

    it('no log line ever contains a token or a password', () => {
      const raw = app.logs.raw.join('\n');
      expect(raw).not.toContain(aliceToken);
      expect(raw).not.toContain('alice-password');
    });

    it('reflection is not registered (spec 4.4 rule 6): v1 and v1alpha → UNIMPLEMENTED', async () => {
      for (const path of ['/grpc.reflection.v1.ServerReflection/ServerReflectionInfo', '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo']) {
        const result = await client.rawCall(path);
        expect(result.ok).toBe(false);
        if (!result.ok) expect({ code: status[result.error.code], details: result.error.details }).toEqual({ code: 'UNIMPLEMENTED', details: 'unknown service or method' });
      }
    });

    it('an unknown method of the service → UNIMPLEMENTED', async () => {
      const result = await client.rawCall('/ordersv1.Orders/DeleteOrder');
      expect(result.ok).toBe(false);
      if (!result.ok) expect(status[result.error.code]).toBe('UNIMPLEMENTED');
    });
  });
});

describe('session errors over gRPC', () => {
  it('Recent when the session scope is full → UNAVAILABLE session unavailable; GetOrder still answers', async () => {
    const app = await startInProcess({ transport: grpcTransport, sessionCap: 1 });
    const client = new OrdersTestClient(`127.0.0.1:${app.port}`);
    try {
      await app.addUser('alice');
      await app.addUser('bob');
      const alice = await client.login('alice', 'alice-password');
      const bob = await client.login('bob', 'bob-password');
      expect(await client.ok('Recent', {}, { token: alice })).toEqual({ recent: [] });
      expectCode(await client.call('Recent', {}, { token: bob }), status.UNAVAILABLE, 'session unavailable');
      // Recording the view is best effort (core overview): GetOrder does not fail on a full scope.
      const order = await client.ok<WireOrder>('CreateOrder', { item: 'x', quantity: 1 }, { token: bob });
      expect((await client.ok<WireOrder>('GetOrder', { id: order.id }, { token: bob })).id).toBe(order.id);
    } finally {
      client.close();
      await app.stop();
    }
  });
});
