import { setTimeout as sleep } from 'node:timers/promises';
import { adminProbe } from './admin-probe.ts';
import type { Driver, DriverOptions, ListQuery, RawRequest, Reply } from './driver.ts';

type Send = (request: RawRequest) => Promise<Reply>;
export type RestOperations = Pick<Driver, 'login' | 'createOrder' | 'getOrder' | 'listOrders' | 'recent'>;

function authHeaders(auth: string | null): Record<string, string> {
  return auth === null ? {} : { authorization: auth };
}

function jsonBody(value: unknown): { headers: Record<string, string>; body: string } {
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) };
}

/** The five business operations as REST requests (spec 4.1), the same for every REST driver. */
export function restOperations(send: Send): RestOperations {
  return {
    login: (input) => {
      const { headers, body } = jsonBody(input);
      return send({ method: 'POST', path: '/auth/login', headers, body });
    },
    createOrder: (auth, input) => {
      const { headers, body } = jsonBody(input);
      return send({ method: 'POST', path: '/orders', headers: { ...headers, ...authHeaders(auth) }, body });
    },
    getOrder: (auth, id) => send({ method: 'GET', path: `/orders/${encodeURIComponent(id)}`, headers: authHeaders(auth) }),
    listOrders: (auth, query: ListQuery) => {
      const params = new URLSearchParams();
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      if (query.offset !== undefined) params.set('offset', String(query.offset));
      const search = params.size > 0 ? `?${params.toString()}` : '';
      return send({ method: 'GET', path: `/orders${search}`, headers: authHeaders(auth) });
    },
    recent: (auth) => send({ method: 'GET', path: '/me/recent', headers: authHeaders(auth) }),
  };
}

/** Parses a REST answer into a Reply: JSON bodies are parsed, anything else stays text. */
export function restReply(status: number, headers: Record<string, string>, text: string, httpVersion: string): Reply {
  let body: unknown;
  if ((headers['content-type'] ?? '').startsWith('application/json')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { api: 'rest', status, headers, text, httpVersion, body };
}

/** Flattens node's header object (arrays joined) with lower-case names. */
export function flatHeaders(raw: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || name.startsWith(':')) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/**
 * A REST driver from its wire: every REST driver retries 429s the same way (when asked), reports each
 * exchange to the observer and offers the same operations, whatever carries the bytes.
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
    ...restOperations(observed),
    raw: observed,
    admin: options.adminUrl === undefined ? undefined : adminProbe(options.adminUrl),
    hooks: options.hooks,
    close,
  };
}
