import { Redis } from 'ioredis';
import { flow, request, type Case, type RequestCase } from '../case-model.ts';
import { answers, invalidArgument, MALFORMED, MSG, OK } from './messages.ts';

/** Create and fetch (spec 2.1, 3.1, 4.1 table, 7): shapes, validation, ownership, ids. */

const created = (item: string, quantity: number) => answers({ shape: 'Order', fields: { item, quantity, status: 'pending' } }, 201);

const createCases: Case[] = [
  request(
    'create-order',
    [
      'CREATE-201',
      'SVC-operations',
      'SHAPE-order',
      'SHAPE-create-request',
      'ORDER-pending',
      'SHAPE-independent',
      'HTTP-content-type',
      'SHAPE-json',
      'GRPC-fields',
    ],
    { op: 'createOrder', input: { item: 'widget', quantity: 3 } },
    created('widget', 3),
  ),
  request(
    'create-ignores-client-id-status-and-owner',
    ['ORDER-pending', 'AUTH-own-user', 'SHAPE-independent'],
    {
      setup: { users: ['me', 'other'] },
      op: 'createOrder',
      input: {
        item: 'widget',
        quantity: 1,
        status: 'shipped',
        id: '00000000-0000-4000-8000-000000000000',
        user_id: '{userId:other}',
        userId: '{userId:other}',
      },
    },
    { http: { status: 201, body: { shape: 'Order', fields: { status: 'pending' } } } },
  ),
  // A lone surrogate: JSON can carry it, UTF-8 cannot, so protobuf refuses the message itself (the
  // client's encoder writes invalid UTF-8); either way no order holds it (rule ORDER-item-limits).
  request(
    'create-item-with-lone-surrogate',
    ['CREATE-400', 'ERR-validation', 'ERR-validation-text', 'ORDER-item-limits', 'GRPC-malformed'],
    { op: 'createOrder', input: { item: 'a\ud800b', quantity: 1 } },
    { http: { status: 400, error: MSG.itemSurrogate }, grpc: { code: 'INVALID_ARGUMENT', message: MSG.malformedMessage } },
  ),
  ...(
    [
      ['create-item-200-characters', 'x'.repeat(200), 1],
      ['create-item-200-non-ascii-characters', 'é'.repeat(200), 1],
      ['create-quantity-int32-max', 'widget', 2147483647],
    ] as const
  ).map(([name, item, quantity]): RequestCase =>
    request(name, ['ORDER-item-limits', 'CREATE-201'], { op: 'createOrder', input: { item, quantity } }, created(item, quantity)),
  ),
  ...(
    [
      ['create-item-empty', { item: '', quantity: 1 }, MSG.itemRequired],
      ['create-item-blank', { item: '   ', quantity: 1 }, MSG.itemRequired],
      ['create-item-absent', { quantity: 1 }, MSG.itemRequired],
      ['create-item-201-characters', { item: 'x'.repeat(201), quantity: 1 }, MSG.itemTooLong],
      ['create-item-with-nul', { item: 'a\u0000b', quantity: 1 }, MSG.itemNul],
      ['create-quantity-zero', { item: 'widget', quantity: 0 }, MSG.quantityPositive],
      ['create-quantity-negative', { item: 'widget', quantity: -5 }, MSG.quantityPositive],
      ['create-quantity-absent', { item: 'widget' }, MSG.quantityPositive],
      // JSON null decodes like an absent field, to the zero value the domain then refuses.
      ['create-quantity-null', { item: 'widget', quantity: null }, MSG.quantityPositive],
    ] as const
  ).map(([name, input, message]): RequestCase =>
    request(
      name,
      [
        'CREATE-400',
        'ERR-validation',
        'ERR-validation-text',
        ...(message.startsWith('quantity') ? ['ERR-quantity-domain'] : ['ORDER-item-limits']),
        'GRPC-message-text',
      ],
      { op: 'createOrder', input },
      invalidArgument(message),
    ),
  ),
  request(
    'create-quantity-above-int32',
    ['CREATE-400', 'ERR-validation', 'ORDER-item-limits', 'ERR-validation-text'],
    { op: 'createOrder', input: { item: 'widget', quantity: 2147483648 } },
    { http: { status: 400, error: MSG.quantityTooLarge } },
  ),
  ...(
    [
      ['create-quantity-fraction', { item: 'widget', quantity: 1.5 }],
      ['create-quantity-string', { item: 'widget', quantity: '3' }],
      ['create-item-number', { item: 42, quantity: 1 }],
    ] as const
  ).map(([name, input]): RequestCase =>
    request(name, ['CREATE-400', 'SHAPE-create-request', 'ERR-malformed-body'], { op: 'createOrder', input }, MALFORMED),
  ),
];

const getCases: Case[] = [
  request(
    'get-own-order',
    ['GET-200', 'SVC-operations', 'SHAPE-order', 'SHAPE-independent', 'HTTP-content-type'],
    { setup: { orders: [{ ref: 'a', item: 'lamp', quantity: 2 }] }, op: 'getOrder', input: { id: '{order:a}' } },
    answers({ shape: 'Order', fields: { id: '{order:a}', item: 'lamp', quantity: 2, status: 'pending' } }),
  ),
  request(
    'get-order-of-another-user',
    ['GET-403', 'ERR-forbidden', 'ERR-403-not-404', 'AUTH-own-user', 'GRPC-message-text'],
    { setup: { users: ['me', 'owner'], orders: [{ ref: 'theirs', owner: 'owner' }] }, op: 'getOrder', input: { id: '{order:theirs}' } },
    { http: { status: 403, error: MSG.forbidden }, grpc: { code: 'PERMISSION_DENIED', message: MSG.forbidden } },
  ),
  request(
    'get-unknown-order',
    ['GET-404', 'ERR-not-found', 'ERR-403-not-404', 'GRPC-message-text'],
    { op: 'getOrder', input: { id: '{uuid}' } },
    { http: { status: 404, error: MSG.notFound }, grpc: { code: 'NOT_FOUND', message: MSG.notFound } },
  ),
  ...(
    [
      ['get-id-not-a-uuid', 'not-a-uuid'],
      ['get-id-number', '12345'],
      ['get-id-uuid-without-dashes', '0f8fad5bd9cb469fa16570867728950e'],
      ['get-id-uuid-with-suffix', '0f8fad5b-d9cb-469f-a165-70867728950e0'],
    ] as const
  ).map(([name, id]): RequestCase =>
    request(
      name,
      ['GET-400-id', 'ERR-invalid-order-id', 'GRPC-message-text'],
      { op: 'getOrder', input: { id } },
      invalidArgument(MSG.invalidOrderId),
    ),
  ),
  // REST: GET /orders/ is not a route; gRPC: an empty id is not a UUID.
  request(
    'get-id-empty',
    ['GET-400-id', 'ERR-invalid-order-id'],
    { op: 'getOrder', input: { id: '' } },
    { grpc: { code: 'INVALID_ARGUMENT', message: MSG.invalidOrderId } },
  ),
  flow('create-then-get-round-trip', ['CREATE-201', 'GET-200', 'SHAPE-order', 'SVC-operations'], {}, async (t) => {
    const me = await t.user();
    const before = Date.now();
    const reply = await t.driver.createOrder(me.auth, { item: 'round trip', quantity: 7 });
    const after = Date.now();
    t.check(reply, answers({ shape: 'Order' }, 201), 'create');
    const got = await t.driver.getOrder(me.auth, (reply.body as { id: string }).id);
    t.check(got, answers({ fields: reply.body as Record<string, unknown> }), 'get returns the created order unchanged');
    // Made during the create (a minute either side for a target on another machine's clock), however long it took.
    const created = Date.parse((reply.body as { created_at: string }).created_at);
    t.assert(
      created >= before - 60_000 && created <= after + 60_000,
      `created_at ${(reply.body as { created_at: string }).created_at} is not the creation time`,
    );
  }),
  // An upper-case UUID is still a UUID (spec 4.1 table, GET-400-id): the same order, its id as stored.
  flow('get-upper-case-id-is-the-same-order', ['GET-400-id', 'GET-200'], {}, async (t) => {
    const { me, id } = await t.userWithOrder('upper', 1);
    const got = await t.driver.getOrder(me.auth, id.toUpperCase());
    t.check(got, answers({ fields: { id } }), 'get by the upper-case id');
  }),
  // A path parameter arrives percent-encoded: an escaped character of the id is the character itself, and
  // an escape that decodes to nothing is left as it is, not an id at all (spec 4.1 table, GET-400-id).
  flow('get-percent-encoded-id-is-the-same-order', ['GET-200', 'GET-400-id'], { api: 'rest' }, async (t) => {
    const { me, id } = await t.userWithOrder('escaped', 1);
    const escaped = id.replace(/^./, (first) => `%${first.charCodeAt(0).toString(16).toUpperCase()}`);
    const headers = { authorization: me.auth };
    t.check(
      await t.driver.raw!({ method: 'GET', path: `/orders/${escaped}`, headers }),
      answers({ fields: { id } }),
      'get by an escaped id',
    );
    t.check(
      await t.driver.raw!({ method: 'GET', path: `/orders/%E0%A4%A${id.slice(8)}`, headers }),
      { http: { status: 400, error: MSG.invalidOrderId } },
      'get by an id with a malformed escape',
    );
  }),
  flow('created-order-is-stored', ['SVC-create-durable'], { needs: ['rows'] }, async (t) => {
    const { me, id } = await t.userWithOrder('durable', 2);
    const stored = await t.control().stored(id);
    t.assert(stored !== undefined, `order ${id} is not in the relational store after create`);
    if (stored === undefined) return;
    t.assert(
      stored.item === 'durable' && stored.quantity === 2 && stored.user_id === me.userId && stored.status === 'pending',
      `stored order is ${JSON.stringify(stored)}`,
    );
  }),
  flow('fetch-fills-and-uses-the-cache', ['SVC-cache-aside'], { needs: ['rows'] }, async (t) => {
    const { me, id } = await t.userWithOrder();
    t.check(await t.driver.getOrder(me.auth, id), OK, 'get');
    const inCache = await t.control().cached(id);
    t.assert(inCache !== undefined && inCache.id === id, `order ${id} is not in the cache after create and fetch`);
  }),
  flow(
    'real-cache-entry-expires-in-five-minutes',
    ['SVC-cache-ttl', 'SVC-cache-aside'],
    { needs: ['inProcess'], backends: ['real'] },
    async (t) => {
      const { id } = await t.userWithOrder();
      const [host, port] = (process.env['REDIS_ADDR'] ?? '127.0.0.1:6379').split(':');
      const redis = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        const keys = (await redis.keys(`*${id}`)).filter((k) => k.startsWith('orders:'));
        t.assert(keys.length === 1, `expected one cache key for order ${id}, found ${JSON.stringify(keys)}`);
        const ttl = await redis.ttl(keys[0]!);
        t.assert(ttl > 290 && ttl <= 300, `cache entry TTL is ${ttl} s, expected 300`);
      } finally {
        redis.disconnect();
      }
    },
  ),
  flow('cache-miss-reads-store-and-refills', ['SVC-cache-aside'], { needs: ['faults', 'rows'] }, async (t) => {
    const me = await t.user();
    await t.target.simulator!.set('cache', { failNext: 1 }); // the create's cache write fails: the order is only in the store
    const id = await t.order(me);
    t.assert((await t.control().cached(id)) === undefined, 'setup: the order should not be cached');
    t.check(await t.driver.getOrder(me.auth, id), answers({ fields: { id } }), 'get on a cache miss');
    // The refill is not awaited by the fetch (it must not fail the read): waited for.
    await t.waitFor(async () => (await t.control().cached(id)) !== undefined, 'the miss read from the store to refill the cache');
  }),
  // Reads the shared cache's contents (the control API) and takes both tiers down (the simulator). The near
  // tier is the speed ring's (speed/near-order-cache.ts): the case gets a target of its own with the ring on.
  flow(
    'near-tier-keeps-the-shared-cache-filled-and-serves-recent-orders',
    ['SVC-near-cache', 'SVC-cache-aside'],
    { needs: ['faults', 'rows'], target: { speed: true } },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      t.assert((await t.control().cached(id)) !== undefined, 'the create did not fill the shared cache');
      // Shared cache and store both down: only the in-process tier can answer.
      const simulator = t.target.simulator!;
      await simulator.set('cache', { state: 'down' });
      await simulator.set('database', { state: 'down' });
      try {
        t.check(await t.driver.getOrder(me.auth, id), answers({ fields: { id } }), 'get of a just-created order with cache and store down');
      } finally {
        await simulator.set('cache', { state: 'up' });
        await simulator.set('database', { state: 'up' });
      }
    },
  ),
  // One tier down: the other answers (the cache when the store is down, the store when the cache is).
  ...(
    [
      ['fetch-served-from-cache-when-store-is-down', 'database'],
      ['fetch-degrades-to-store-when-cache-is-down', 'cache'],
    ] as const
  ).map(([name, component]): Case =>
    flow(name, ['SVC-cache-aside'], { needs: ['faults'] }, async (t) => {
      const { me, id } = await t.userWithOrder();
      await t.target.simulator!.set(component, { state: 'down' });
      try {
        t.check(await t.driver.getOrder(me.auth, id), answers({ fields: { id } }), `get with the ${component} down`);
      } finally {
        await t.target.simulator!.set(component, { state: 'up' });
      }
    }),
  ),
  flow('created-order-belongs-to-the-caller', ['AUTH-own-user'], { needs: ['users'] }, async (t) => {
    const { me, id } = await t.userWithOrder();
    const other = await t.user();
    t.check(await t.driver.listOrders(me.auth, {}), answers({ orders: [id] }), 'creator lists it');
    t.check(await t.driver.listOrders(other.auth, {}), answers({ orders: [] }), 'another user does not');
  }),
];

export const ORDER_CASES: Case[] = [...createCases, ...getCases];
