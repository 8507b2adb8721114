import { setTimeout as sleep } from 'node:timers/promises';
import type { Actor, Expectation, FlowCase, FlowContext, Observation, ProcessCase, RequestCase } from '../case-model.ts';
import type { Driver, DriverName, RawRequest, Reply } from '../drivers/driver.ts';
import { PROTECTED_AUTH_DEFAULT } from '../drivers/driver.ts';
import type { Credentials, Target } from '../targets/target.ts';
import type { Transport, RestVariant } from '../../test/support/transports.ts';
import { HANG_GUARD_MS } from '../../test/support/eventually.ts';
import { CaseFailure, checkReply, type Resolve } from './expect.ts';
import { decodeClaims, foreignToken, mintToken, tamperedToken, unsignedToken } from './tokens.ts';

/** Everything a request or flow case runs with: one column's driver on one target. */
export interface RunEnv {
  readonly target: Target;
  readonly driver: Driver;
  /** Another driver on the same target. */
  readonly via: (name: DriverName) => Driver;
  readonly transport: { readonly name: string; readonly restVariant: RestVariant | undefined };
  readonly observed: () => readonly Observation[];
}

/** Setups of more orders than this create them concurrently, without distinct timestamps. */
const BULK_ABOVE = 20;
const BULK_BATCH = 25;

const PLACEHOLDER = /\{(\w+)(?::([\w.-]+))?\}/g;
/** The Actor field each user placeholder names. */
const ACTOR_FIELDS = { token: 'token', user: 'username', password: 'password', userId: 'userId' } as const;

/** Users, orders and tokens of one case run, and the placeholder resolver over them. */
class Scope {
  readonly #env: RunEnv;
  readonly users = new Map<string, Actor>();
  readonly orders = new Map<string, string>();
  readonly #special = new Map<string, string>();
  acting = 'me';
  #lastCreate = 0;

  constructor(env: RunEnv) {
    this.#env = env;
  }

  async addUser(label: string, index: number): Promise<Actor> {
    const credentials = await this.#env.target.newUser(label, index);
    const token =
      this.#env.target.signIn !== undefined ? await this.#env.target.signIn(credentials) : await this.#login(label, credentials);
    const actor: Actor = { ...credentials, token, userId: String(decodeClaims(token)['sub']), auth: `Bearer ${token}` };
    this.users.set(label, actor);
    return actor;
  }

  async #login(label: string, credentials: Credentials): Promise<string> {
    const reply = await this.#env.driver.login(credentials);
    const token = (reply.body as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string')
      throw new CaseFailure(`setup: login of ${label} failed (${reply.status ?? reply.codeName} ${reply.text ?? reply.message ?? ''})`);
    return token;
  }

  actor(label: string = this.acting): Actor {
    const actor = this.users.get(label);
    if (actor === undefined) throw new Error(`case uses user ${label}, which its setup does not create`);
    return actor;
  }

  /** Orders created by setup land in distinct milliseconds, so "newest first" has one answer. */
  async createOrder(owner: Actor, item: string, quantity: number, spaced: boolean): Promise<string> {
    if (spaced) {
      while (Date.now() <= this.#lastCreate + 1) await sleep(1);
      this.#lastCreate = Date.now();
    }
    const id =
      this.#env.target.placeOrder !== undefined
        ? await this.#env.target.placeOrder(owner.auth, item, quantity)
        : await this.#placeThroughDriver(owner, item, quantity);
    if (spaced) this.#lastCreate = Date.now();
    return id;
  }

  async #placeThroughDriver(owner: Actor, item: string, quantity: number): Promise<string> {
    const reply = await this.#env.driver.createOrder(owner.auth, { item, quantity });
    const id = (reply.body as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string')
      throw new CaseFailure(`setup: create order failed (${reply.status ?? reply.codeName} ${reply.text ?? reply.message ?? ''})`);
    return id;
  }

  /** Tokens the placeholders may name, made before resolution (signing is async). */
  async prepareTokens(usesText: string): Promise<void> {
    const actor = this.users.get(this.acting);
    if (actor === undefined) return;
    const name = actor.username;
    if (usesText.includes('{expiredToken}')) {
      const secret = this.#env.target.jwtSecret;
      if (secret === undefined) throw new Error('{expiredToken} needs the target secret (capability secret)');
      this.#special.set('expiredToken', await mintToken({ secret, sub: actor.userId, name, iatOffset: -7200, expOffset: -3600 }));
    }
    if (usesText.includes('{foreignToken}')) this.#special.set('foreignToken', await foreignToken(actor.userId, name));
    if (usesText.includes('{noneToken}')) this.#special.set('noneToken', unsignedToken(actor.token));
    if (usesText.includes('{tamperedToken}')) this.#special.set('tamperedToken', tamperedToken(actor.token));
  }

  readonly resolve: Resolve = <T>(value: T): T => this.#resolveValue(value) as T;

  #resolveValue(value: unknown): unknown {
    if (typeof value === 'string')
      return value.replace(PLACEHOLDER, (whole, kind: string, arg: string | undefined) => this.#lookup(whole, kind, arg));
    if (Array.isArray(value)) return value.map((v) => this.#resolveValue(v));
    if (value !== null && typeof value === 'object' && !(value instanceof RegExp) && !Buffer.isBuffer(value)) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.#resolveValue(v)]));
    }
    return value;
  }

  #lookup(whole: string, kind: string, arg: string | undefined): string {
    if (Object.hasOwn(ACTOR_FIELDS, kind)) return this.actor(arg)[ACTOR_FIELDS[kind as keyof typeof ACTOR_FIELDS]];
    switch (kind) {
      case 'order': {
        const id = this.orders.get(arg ?? '');
        if (id === undefined) throw new Error(`case names order ${arg}, which its setup does not create`);
        return id;
      }
      case 'uuid':
        return crypto.randomUUID();
      case 'expiredToken':
      case 'foreignToken':
      case 'noneToken':
      case 'tamperedToken': {
        const token = this.#special.get(kind);
        if (token === undefined) throw new Error(`${whole} was not prepared`);
        return token;
      }
      default:
        return whole;
    }
  }
}

async function perform(c: RequestCase, driver: Driver, scope: Scope): Promise<Reply> {
  const auth = c.auth === null ? null : scope.resolve(c.auth ?? PROTECTED_AUTH_DEFAULT);
  switch (c.op) {
    case 'login':
      return driver.login(scope.resolve(c.input));
    case 'createOrder':
      return driver.createOrder(auth, scope.resolve(c.input));
    case 'getOrder':
      return driver.getOrder(auth, scope.resolve(c.input.id));
    case 'listOrders':
      return driver.listOrders(auth, scope.resolve(c.input));
    case 'recent':
      return driver.recent(auth);
    case 'raw': {
      if (driver.raw === undefined) throw new Error(`${driver.name} cannot send raw HTTP requests`);
      const request = scope.resolve(c.input) as RawRequest;
      const headers: Record<string, string> = { ...request.headers };
      if (c.auth !== undefined && auth !== null) headers['authorization'] = auth;
      return driver.raw({ ...request, headers });
    }
  }
}

export async function runRequestCase(c: RequestCase, env: RunEnv): Promise<void> {
  const scope = new Scope(env);
  const labels = c.setup?.users ?? ['me'];
  for (const [index, label] of labels.entries()) await scope.addUser(label, index);
  scope.acting = labels[0] ?? 'me';
  for (const order of c.setup?.orders ?? []) {
    const owner = scope.actor(order.owner);
    const count = order.count ?? 1;
    const name = (i: number): string | undefined =>
      order.ref === undefined ? undefined : order.count === undefined ? order.ref : `${order.ref}-${i}`;
    // Bulk setup (page-size clamps) only counts, so creation order does not matter: batches run concurrently.
    const spaced = count <= BULK_ABOVE;
    const step = spaced ? 1 : BULK_BATCH;
    for (let start = 1; start <= count; start += step) {
      const batch = Array.from({ length: Math.min(step, count - start + 1) }, (_, k) => start + k);
      const ids = await Promise.all(batch.map((i) => scope.createOrder(owner, order.item ?? `item-${i}`, order.quantity ?? 1, spaced)));
      batch.forEach((i, k) => (name(i) === undefined ? undefined : scope.orders.set(name(i)!, ids[k]!)));
    }
  }
  for (const [label, ref] of c.setup?.views ?? []) {
    const id = scope.resolve(`{order:${ref}}`);
    const reply = await env.driver.getOrder(scope.actor(label).auth, id);
    if (reply.status !== 200 && reply.codeName !== 'OK')
      throw new CaseFailure(`setup: view of ${ref} by ${label} failed (${reply.status ?? reply.codeName})`);
  }
  await scope.prepareTokens(JSON.stringify([c.input, c.auth, c.expect]));
  const reply = await perform(c, env.driver, scope);
  checkReply(reply, c.expect, env.transport.restVariant, scope.resolve, c.op);
}

function assert(condition: unknown, message: string): void {
  if (!condition) throw new CaseFailure(message);
}

function flowContext(env: RunEnv): FlowContext {
  const scope = new Scope(env);
  let userIndex = 0;
  const context: FlowContext = {
    driver: env.driver,
    api: env.driver.api,
    target: env.target,
    transport: env.transport,
    async user(label = 'user') {
      const actor = await scope.addUser(`${label}${userIndex}`, userIndex);
      userIndex += 1;
      return actor;
    },
    order: (actor, item = 'widget', quantity = 1) => scope.createOrder(actor, item, quantity, true),
    async userWithOrder(item, quantity) {
      const me = await context.user();
      return { me, id: await context.order(me, item, quantity) };
    },
    check: (reply: Reply, expectation: Expectation, label: string) =>
      checkReply(reply, expectation, env.transport.restVariant, scope.resolve, label),
    assert,
    spans() {
      const spans = env.target.spans;
      if (spans === undefined) throw new Error('case reads spans but the target has none (capability spans)');
      return spans();
    },
    control() {
      const control = env.target.control;
      if (control === undefined)
        throw new Error('case reads records or injects a fault but the target has no control (capabilities rows, recorders, handlerFault)');
      return control;
    },
    logs() {
      const logs = env.target.logs;
      if (logs === undefined) throw new Error('case reads logs but the target has none (capability logs)');
      return logs.lines;
    },
    async waitFor(probe, label, timeoutMs = HANG_GUARD_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined && value !== false) return value;
        if (Date.now() > deadline) throw new CaseFailure(`${label}: not seen within ${timeoutMs} ms`);
        await sleep(10);
      }
    },
    async scrape() {
      const admin = env.driver.admin;
      if (admin === undefined) throw new Error('case scrapes metrics but the target has no admin listener (capability admin)');
      const reply = await admin.metrics();
      if (reply.status !== 200) throw new CaseFailure(`GET /metrics answered ${reply.status}`);
      return reply.text ?? '';
    },
    via: env.via,
    sleep: (ms) => sleep(ms),
    // The service's clock (session linger, token expiry, cache TTL) when the target runs on the simulator.
    elapse: async (ms) => void (env.target.simulator !== undefined ? await env.target.simulator.advance(ms) : await sleep(ms)),
    observed: env.observed,
  };
  return context;
}

export async function runFlowCase(c: FlowCase, env: RunEnv): Promise<void> {
  await c.run(flowContext(env));
}

export async function runProcessCase(c: ProcessCase, transport: Transport): Promise<void> {
  await c.run({ transport, assert });
}
