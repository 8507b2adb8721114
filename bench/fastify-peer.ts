// The Fastify peer of the GET targets (docs/performance.md): GET /orders/{id} the way a typical team writes it with Fastify 5, @fastify/jwt,
// ioredis, pino (Fastify's own logger) and prom-client, doing the work of our cache-hit path: verify the
// HS256 bearer token, read the order from Redis, check the owner, answer the Order JSON, one log line and
// one histogram observation per request. It is no part of the product: bench/run.ts starts it as a
// child (real Redis only) and measures it next to ours. Run by bench/run.ts, never by hand.
import fastifyJwt from '@fastify/jwt';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import client from 'prom-client';
import { announce, serveParent } from './child.ts';

const [host = '127.0.0.1', port = '6379'] = (process.env['REDIS_ADDR'] ?? '127.0.0.1:6379').split(':');
const prefix = `fastify-peer:${randomBytes(4).toString('hex')}:`;
const redis = new Redis({ host, port: Number(port), lazyConnect: true, commandTimeout: 500 });
await redis.connect();

const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });
const duration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration',
  labelNames: ['method', 'route', 'status_code'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

// The usual set-up: pino to stdout (the bench sends it to /dev/null), the Authorization header redacted,
// one line per request from the onResponse hook (Fastify's two default lines turned into one, like ours).
const app = Fastify({
  logger: { level: 'info', redact: ['req.headers.authorization'] },
  disableRequestLogging: true,
});
const secret = randomBytes(32).toString('base64url');
await app.register(fastifyJwt, { secret, verify: { algorithms: ['HS256'] } });

app.addHook('onResponse', async (request, reply) => {
  const route = request.routeOptions.url ?? 'unknown';
  duration.observe({ method: request.method, route, status_code: reply.statusCode }, reply.elapsedTime / 1000);
  request.log.info({ method: request.method, route, status: reply.statusCode, duration_ms: reply.elapsedTime }, 'request completed');
});

app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));

app.get<{ Params: { id: string } }>(
  '/orders/:id',
  {
    onRequest: async (request) => {
      await request.jwtVerify();
    },
    schema: {
      params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] },
      response: {
        200: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            item: { type: 'string' },
            quantity: { type: 'integer' },
            status: { type: 'string' },
            created_at: { type: 'string' },
          },
        },
      },
    },
  },
  async (request, reply) => {
    const raw = await redis.get(prefix + request.params.id);
    // The database read of a cache miss is not part of this comparison (the order is always cached).
    if (raw === null) return reply.code(404).send({ error: 'order not found' });
    const order = JSON.parse(raw) as typeof stored;
    if (order.user_id !== (request.user as { sub: string }).sub) return reply.code(403).send({ error: 'forbidden' });
    return order;
  },
);

const userId = randomUUID();
const stored = {
  id: randomUUID(),
  user_id: userId,
  item: 'bench item',
  quantity: 1,
  status: 'pending',
  created_at: new Date().toISOString(),
};
await redis.set(prefix + stored.id, JSON.stringify(stored), 'EX', 3_600);
const token = app.jwt.sign({ sub: userId, name: 'bench-get' }, { expiresIn: '1h' });

serveParent({
  stop: () =>
    app
      .close()
      .then(() => redis.del(prefix + stored.id))
      .then(() => redis.quit())
      .then(() => undefined),
});

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address() as AddressInfo;
announce({
  ready: {
    port: address.port,
    fixtures: { getOrderId: stored.id, getToken: token, listToken: '', postToken: '', loginBody: '' },
    seedMs: 0,
  },
});
