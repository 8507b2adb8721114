import { setTimeout as sleep } from 'node:timers/promises';
import { adminProbe } from './rest-reply.ts';
import type { Driver, DriverOptions, ListQuery, RawRequest, Reply } from './driver.ts';

type Send = (request: RawRequest) => Promise<Reply>;

function authHeaders(auth: string | null): Record<string, string> {
  return auth === null ? {} : { authorization: auth };
}

function jsonBody(value: unknown): { headers: Record<string, string>; body: string } {
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) };
}

/**
 * A REST driver from its wire: every REST driver retries 429s the same way (when asked), reports each
 * exchange to the observer and offers the same operations (the five of spec 4.1 as REST requests),
 * whatever carries the bytes.
 */
export function restDriver(name: Driver['name'], send: Send, options: DriverOptions, close: () => Promise<void>): Driver {
  const observed = async (raw: RawRequest): Promise<Reply> => {
    let reply = await send(raw);
    for (let attempt = 0; options.retryRateLimited && reply.status === 429 && attempt < 10; attempt++) {
      await sleep(Math.max(1, Number(reply.headers?.['retry-after']) || 1) * 1000);
      reply = await send(raw);
    }
    options.observe?.(raw, reply);
    return reply;
  };
  return {
    name,
    api: 'rest',
    login: (input) => observed({ method: 'POST', path: '/auth/login', ...jsonBody(input) }),
    createOrder: (auth, input, options) => {
      const { headers, body } = jsonBody(input);
      const key: Record<string, string> = options?.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey };
      return observed({ method: 'POST', path: '/orders', headers: { ...headers, ...authHeaders(auth), ...key }, body });
    },
    getOrder: (auth, id) => observed({ method: 'GET', path: `/orders/${encodeURIComponent(id)}`, headers: authHeaders(auth) }),
    listOrders: (auth, query: ListQuery) => {
      const params = new URLSearchParams();
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      if (query.offset !== undefined) params.set('offset', String(query.offset));
      const search = params.size > 0 ? `?${params.toString()}` : '';
      return observed({ method: 'GET', path: `/orders${search}`, headers: authHeaders(auth) });
    },
    recent: (auth) => observed({ method: 'GET', path: '/me/recent', headers: authHeaders(auth) }),
    raw: observed,
    admin: options.adminUrl === undefined ? undefined : adminProbe(options.adminUrl),
    hooks: options.hooks,
    close,
  };
}
