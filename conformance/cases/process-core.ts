import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { isSpanContextValid, TraceFlags } from '@opentelemetry/api';
import { register } from 'prom-client';
import ts from 'typescript';
import { MemoryOrderCache } from '../../fakes/memory-cache.ts';
import { natsConfigFromEnv } from '../../src/adapters/nats/nats-config.ts';
import { redisConfigFromEnv } from '../../src/adapters/redis/redis-config.ts';
import { NatsEventBus } from '../../src/adapters/nats/nats-event-bus.ts';
import { ConfigError, type Env } from '../../src/config/env.ts';
import { loadServiceConfig } from '../../src/config/service-config.ts';
import { createEmbeddedBackends } from '../../src/composition/embedded-backends.ts';
import { createRealBackends } from '../../src/composition/real-backends.ts';
import { DomainError, ErrForbidden, ErrInvalidCredentials, ErrValidation } from '../../src/domain/errors.ts';
import { ORDER_PLACED_SUBJECT } from '../../src/domain/order-placed.ts';
import { validateNewOrder } from '../../src/domain/order.ts';
import { sessionKeyFromVerifiedSubject } from '../../src/domain/session-key.ts';
import { ComponentChecker, type Checker } from '../../src/lifecycle/checker.ts';
import { createLogger, defaultLogger, parseLogLevel } from '../../src/observability/logger.ts';
import { HttpMetrics } from '../../src/observability/metrics.ts';
import { Tracing } from '../../src/observability/tracer.ts';
import { AuthService } from '../../src/service/auth-service.ts';
import { OrderService } from '../../src/service/order-service.ts';
import { hashPassword, verifyPassword } from '../../src/service/password-hasher.ts';
import { TokenService } from '../../src/service/token-service.ts';
import { ErrNoDoneSignal, ErrNoScopeKey, ErrScopeFull, isSessionError } from '../../src/session/session-errors.ts';
import { SESSION_CAP, SESSION_LINGER_MS, SessionScope, type TimerPort } from '../../src/session/session-scope.ts';
import { createAdminHandler } from '../../src/transports/http/admin-handler.ts';
import { decodeCreateOrderRequest } from '../../src/transports/http/dto.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import type { Case, ProcessContext } from '../case-model.ts';
import { ORDERS_PROTO } from '../drivers/grpc.ts';
import { REPO_ROOT } from '../targets/transports.ts';

/** Transport-independent checks of the core, run once in the `core` column. */

const SECRET = 'x'.repeat(32);
const key = sessionKeyFromVerifiedSubject;

/** Timers fired by hand: the linger is observable without waiting. */
class ManualTimers implements TimerPort {
  readonly pending = new Map<number, { callback: () => void; ms: number }>();
  #next = 0;
  setTimeout(callback: () => void, ms: number): unknown {
    this.#next += 1;
    this.pending.set(this.#next, { callback, ms });
    return this.#next;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  fireAll(): void {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const t of due) t.callback();
  }
}

function scope(options: { lingerMs?: number; cap?: number; timers?: TimerPort; capacity?: number } = {}) {
  const logs = new LogCapture();
  const sessions = new SessionScope({ recentCapacity: options.capacity ?? 10, logger: createLogger('debug', logs), lingerMs: options.lingerMs, cap: options.cap, timers: options.timers });
  return { sessions, logs };
}

function throws(p: ProcessContext, fn: () => unknown, kind: new (...args: never[]) => Error, label: string): Error {
  try {
    fn();
  } catch (error) {
    p.assert(error instanceof kind, `${label}: threw ${error instanceof Error ? error.name : String(error)}, expected ${kind.name}`);
    return error as Error;
  }
  p.assert(false, `${label}: did not throw ${kind.name}`);
  throw new Error('unreachable');
}

async function rejects(p: ProcessContext, fn: () => Promise<unknown>, label: string): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    p.assert(error instanceof Error, `${label}: rejected with a non-Error`);
    return error as Error;
  }
  p.assert(false, `${label}: did not fail`);
  throw new Error('unreachable');
}

async function serve(checker: Checker): Promise<{ url: string; close: () => void }> {
  const server = createServer(createAdminHandler(checker, new HttpMetrics()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

const REAL_ENV: Env = { POSTGRES_DSN: 'postgres://postgres:pw-hunter2@127.0.0.1:1/test', REDIS_ADDR: '127.0.0.1:1', NATS_URL: 'nats://127.0.0.1:1' };

const cases: Case[] = [
  {
    kind: 'process',
    per: 'once',
    name: 'session-acquire-errors',
    rules: ['SESSION-no-key', 'ERR-session-errors', 'SESSION-identity', 'SESSION-R2-fallback'],
    async run(p) {
      const { sessions } = scope({ cap: 1 });
      const signal = new AbortController().signal;
      const noKey = throws(p, () => sessions.acquire({ signal }), ErrNoScopeKey, 'acquire without a key');
      p.assert(sessions.size === 0, 'an acquire without a key created a session');
      const noSignal = throws(p, () => sessions.acquire({ sessionKey: key('u1') }), ErrNoDoneSignal, 'acquire with a context that can never end');
      p.assert(sessions.size === 0, 'an acquire without a done signal created a session');
      sessions.acquire({ sessionKey: key('u1'), signal });
      const full = throws(p, () => sessions.acquire({ sessionKey: key('u2'), signal }), ErrScopeFull, 'acquire at the cap');
      p.assert([noKey, noSignal, full].every(isSessionError), 'session errors are not recognisable as such (transports map them to 503)');
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'session-cap-and-linger-are-the-spec-constants',
    rules: ['LIMIT-session-cap', 'LIMIT-linger-constant', 'SESSION-linger-start', 'CONFIG-constants'],
    async run(p) {
      p.assert(SESSION_CAP === 50_000 && SESSION_LINGER_MS === 300_000, `constants are cap ${SESSION_CAP}, linger ${SESSION_LINGER_MS} ms`);
      const timers = new ManualTimers();
      const { sessions } = scope({ timers });
      const signal = new AbortController().signal;
      for (let i = 0; i < 50_000; i++) sessions.acquire({ sessionKey: key(`user-${i}`), signal })();
      p.assert(sessions.size === 50_000 && sessions.stateOf(key('user-0')) === 'lingering', `after 50,000 released acquires: size ${sessions.size}, state ${sessions.stateOf(key('user-0'))}`);
      p.assert([...timers.pending.values()].every((t) => t.ms === 300_000), 'a linger timer is not 5 minutes');
      throws(p, () => sessions.acquire({ sessionKey: key('user-50000'), signal }), ErrScopeFull, 'the 50,001st live instance');
      const config = loadServiceConfig({ JWT_SECRET: SECRET, SESSION_LINGER: '1s', SESSION_CAP: '1', SESSION_LINGER_MS: '1' }, { embedded: false });
      p.assert(!/linger|cap/i.test(JSON.stringify(config)), `configuration carries linger or cap: ${JSON.stringify(config)}`);
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'session-release-linger-and-flush',
    rules: ['SESSION-R1-release', 'SESSION-linger-start', 'SESSION-R3-cancel', 'SESSION-R4-flush-safe', 'SESSION-R6-own-context', 'SESSION-R2-fallback'],
    async run(p) {
      const timers = new ManualTimers();
      const { sessions, logs } = scope({ lingerMs: 1000, timers });
      const u = key('user-1');
      // Rule 1: the returned release function, disposable, idempotent.
      {
        using lease = sessions.acquire({ sessionKey: u, signal: new AbortController().signal });
        p.assert(typeof lease === 'function' && typeof lease[Symbol.dispose] === 'function', 'acquire does not return a release function that is also disposable');
        lease.session.recordView('o-1');
        p.assert(sessions.stateOf(u) === 'live', 'not live while held');
      }
      p.assert(sessions.stateOf(u) === 'lingering' && timers.pending.size === 1, `after release: ${sessions.stateOf(u)} with ${timers.pending.size} timers`);
      p.assert([...timers.pending.values()][0]!.ms === 1000, 'linger timer does not use the linger window');
      // Rule 3: cancelling one holder's context never closes an instance another holder uses.
      const a = new AbortController();
      const b = new AbortController();
      const first = sessions.acquire({ sessionKey: u, signal: a.signal });
      sessions.acquire({ sessionKey: u, signal: b.signal });
      p.assert(timers.pending.size === 0 && first.session.recent()[0] === 'o-1', 'reacquire inside the linger did not reuse the instance');
      a.abort();
      await Promise.resolve();
      p.assert(sessions.stateOf(u) === 'live', `cancelling one holder changed the instance to ${sessions.stateOf(u)}`);
      // Rule 2: the forgotten release happens when the context ends; rule 6: the instance outlives it.
      b.abort();
      await Promise.resolve();
      p.assert(sessions.stateOf(u) === 'lingering', `the fallback release did not run: ${sessions.stateOf(u)}`);
      const again = sessions.acquire({ sessionKey: u, signal: new AbortController().signal });
      p.assert(again.session === first.session, 'the instance did not outlive the contexts that acquired it');
      // Rule 4: flush reads a snapshot that later writes cannot change.
      const snapshot = again.session.snapshot();
      again.session.recordView('o-2');
      p.assert(JSON.stringify(snapshot.recent) === '["o-1"]', `a snapshot changed under a concurrent write: ${JSON.stringify(snapshot.recent)}`);
      again();
      p.assert(logs.find('session: closed').length === 0, 'flush ran on the release (a request), not on the scope timer');
      timers.fireAll();
      const closed = logs.find('session: closed');
      p.assert(closed.length === 1 && closed[0]!['user'] === u && closed[0]!['views'] === 2 && JSON.stringify(closed[0]!['recent']) === '["o-2","o-1"]', `flush line: ${JSON.stringify(closed)}`);
      p.assert(sessions.stateOf(u) === 'absent', 'the instance was not stopped after its flush');
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'session-key-is-a-distinct-type',
    rules: ['SESSION-key'],
    async run(p) {
      const probe = `${REPO_ROOT}conformance/__session-key-probe__.ts`;
      const source = [
        "import type { SessionKey } from '../src/domain/session-key.ts';",
        "import { sessionKeyFromVerifiedSubject } from '../src/domain/session-key.ts';",
        "export const minted: SessionKey = sessionKeyFromVerifiedSubject('user-1');",
        "export const bare: SessionKey = 'user-1';",
      ].join('\n');
      const options: ts.CompilerOptions = {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        skipLibCheck: true,
        types: [],
        lib: ['lib.es2022.d.ts'],
      };
      const host = ts.createCompilerHost(options);
      const getSourceFile = host.getSourceFile.bind(host);
      host.getSourceFile = (name, version, ...rest) => (name === probe ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest));
      const fileExists = host.fileExists.bind(host);
      host.fileExists = (name) => name === probe || fileExists(name);
      const program = ts.createProgram([probe], options, host);
      const errors = ts.getPreEmitDiagnostics(program, program.getSourceFile(probe)).map((d) => ({ line: d.file?.getLineAndCharacterOfPosition(d.start ?? 0).line, text: ts.flattenDiagnosticMessageText(d.messageText, ' ') }));
      p.assert(errors.some((e) => e.line === 3), 'a bare string is assignable to SessionKey: the key is not a dedicated type');
      p.assert(errors.every((e) => e.line === 3), `the minted key does not type-check: ${JSON.stringify(errors)}`);
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'admin-routes-serve-any-checker',
    rules: ['ADMIN-checker', 'ADMIN-readyz-null', 'HEALTH-nodes-null', 'ADMIN-healthz', 'ADMIN-readyz'],
    async run(p) {
      const none = await serve(new ComponentChecker([{ name: 'plain' }]));
      try {
        for (const path of ['/readyz', '/healthz']) {
          const reply = await fetch(`${none.url}${path}`);
          const text = await reply.text();
          p.assert(reply.status === 200 && text === '{"clean":true,"nodes":null}', `${path} with no component implementing it: ${reply.status} ${text}`);
        }
      } finally {
        none.close();
      }
      const stub: Checker = {
        health: async () => ({ clean: false, nodes: [{ name: 'stub', status: 'unavailable', error: 'stub down' }] }),
        ready: async () => ({ clean: false, nodes: [{ name: 'api', status: 'unavailable', error: 'api: not accepting connections yet' }] }),
      };
      const served = await serve(stub);
      try {
        for (const [path, report] of [['/healthz', await stub.health()], ['/readyz', await stub.ready()]] as const) {
          const reply = await fetch(`${served.url}${path}`);
          p.assert(reply.status === 503 && (reply.headers.get('content-type') ?? '').startsWith('application/json'), `${path} not clean: ${reply.status} ${reply.headers.get('content-type')}`);
          p.assert(JSON.stringify(await reply.json()) === JSON.stringify(report), `${path} does not serve the checker's report as is`);
        }
      } finally {
        served.close();
      }
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'owner-check-in-the-service-layer',
    rules: ['AUTHZ-service-layer', 'ERR-forbidden'],
    async run(p) {
      const logger = createLogger('error', new LogCapture());
      const backends = await createEmbeddedBackends(logger, { seedDemoUsers: false });
      const sessions = new SessionScope({ recentCapacity: 10, logger });
      const service = new OrderService({ repository: backends.repository, cache: backends.cache, publisher: backends.publisher, sessions, logger });
      const principal = (userId: string) => ({ userId, claims: { sub: userId, name: userId, iat: 0, exp: 0 }, sessionKey: key(userId) });
      const signal = new AbortController().signal;
      const order = await service.create({ principal: principal('owner'), signal }, 'x', 1);
      const error = await rejects(p, () => service.get({ principal: principal('intruder'), signal }, order.id), 'get of a foreign order in the service');
      p.assert(error instanceof ErrForbidden && error instanceof DomainError, `the service raised ${error.name}, expected ErrForbidden`);
      p.assert(!('status' in error) && !('code' in error), 'the domain error carries a transport status');
      await sessions.stop();
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'quantity-rule-only-in-the-domain',
    rules: ['ERR-quantity-domain', 'ERR-validation'],
    async run(p) {
      for (const quantity of [0, -1]) {
        throws(p, () => validateNewOrder({ userId: 'u', item: 'x', quantity }), ErrValidation, `domain validation of quantity ${quantity}`);
        try {
          decodeCreateOrderRequest(JSON.stringify({ item: 'x', quantity }));
        } catch (error) {
          p.assert(false, `the HTTP decoder rejects quantity ${quantity} itself (${error instanceof Error ? error.message : String(error)}): the rule is duplicated in the transport`);
        }
      }
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'logger-levels-and-process-default',
    rules: ['LOG-level', 'LOG-default', 'LOG-json'],
    async run(p) {
      const table: [string | undefined, string][] = [['debug', 'debug'], ['warn', 'warn'], ['error', 'error'], ['info', 'info'], ['', 'info'], [undefined, 'info'], ['verbose', 'info'], ['DEBUG', 'info']];
      for (const [input, expected] of table) p.assert(parseLogLevel(input) === expected, `LOG_LEVEL=${String(input)} selects ${parseLogLevel(input)}, expected ${expected}`);
      const capture = new LogCapture();
      const logger = createLogger('info', capture);
      p.assert(defaultLogger() === logger, 'building the logger did not install it as the process default');
      defaultLogger().info({ k: 1 }, 'probe');
      const line = capture.lines.at(-1)!;
      p.assert(line.msg === 'probe' && line.level === 'info' && !Number.isNaN(Date.parse(line.time)), `line is ${JSON.stringify(line)}`);
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'metrics-registry-per-instance',
    rules: ['METRICS-own-registry'],
    async run(p) {
      const one = new HttpMetrics();
      const two = new HttpMetrics();
      p.assert(one.registry !== two.registry && one.registry !== register, 'instances share a registry');
      one.observe('GET', 'GET /orders', 200, 0.01);
      p.assert(!(await two.scrape()).includes('GET /orders'), 'a sample of one instance shows in another');
      p.assert(register.getSingleMetric('orders_http_requests_total') === undefined, 'the process-global registry holds orders metrics');
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'tracer-complete-after-constructor-and-flushed-by-stop',
    rules: ['TRACE-constructor', 'LIFE-5-tracer-flush', 'TRACE-no-endpoint', 'TRACE-no-connect'],
    async run(p) {
      const immediate = new InMemorySpanExporter();
      const tracing = new Tracing({ serviceName: 'probe', otlpEndpoint: '', processors: [new SimpleSpanProcessor(immediate)] });
      const span = tracing.tracer.startSpan('probe');
      const context = span.spanContext();
      p.assert(isSpanContextValid(context) && (context.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED, 'a span right after construction is not valid and sampled');
      span.end();
      p.assert(immediate.getFinishedSpans().length === 1, 'the tracer needed a start step');
      await tracing.stop();

      // InMemorySpanExporter forgets its spans on shutdown, so a recorder that keeps them.
      const exported: ReadableSpan[] = [];
      let shutDown = false;
      const recorder: SpanExporter = {
        export: (spans, done) => (exported.push(...spans), done({ code: 0 /* ExportResultCode.SUCCESS */ })),
        shutdown: async () => void (shutDown = true),
      };
      const flushing = new Tracing({ serviceName: 'probe', otlpEndpoint: '', processors: [new BatchSpanProcessor(recorder, { scheduledDelayMillis: 60_000 })] });
      flushing.tracer.startSpan('batched').end();
      p.assert(exported.length === 0, 'setup: the batch exported early');
      await flushing.stop();
      p.assert(exported.length === 1, "the tracer's Stop did not flush the pending batch");
      p.assert(shutDown, "the tracer's Stop did not shut the provider's exporters down");

      // Construction with an endpoint nobody listens on neither connects nor fails.
      const unreachable = new Tracing({ serviceName: 'probe', otlpEndpoint: '127.0.0.1:1' });
      p.assert(isSpanContextValid(unreachable.tracer.startSpan('x').spanContext()), 'a tracer with an unreachable endpoint is not usable at once');
      await unreachable.stop();
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'configuration-defaults',
    rules: ['CONFIG-defaults', 'LIMIT-listen-defaults', 'LIMIT-rate', 'LIMIT-token-lifetime', 'LIMIT-session-recent', 'CONFIG-session-vars', 'CONFIG-own-vars'],
    async run(p) {
      // The service's own section needs no backend variable: each adapter reads its own (spec 8.1).
      const config = loadServiceConfig({ JWT_SECRET: SECRET }, { embedded: false });
      const actual = {
        httpAddr: config.httpAddr,
        adminAddr: config.adminAddr,
        expiryMs: config.tokens.expiryMs,
        logLevel: config.logLevel,
        otlpEndpoint: config.otlpEndpoint,
        rateLimitRps: config.rateLimitRps,
        sessionRecent: config.sessionRecent,
      };
      const expected = {
        httpAddr: { host: undefined, port: 8080 },
        adminAddr: { host: undefined, port: 8081 },
        expiryMs: 3_600_000,
        logLevel: 'info',
        otlpEndpoint: '',
        rateLimitRps: 50,
        sessionRecent: 10,
      };
      p.assert(JSON.stringify(actual) === JSON.stringify(expected), `defaults are ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
      const set = loadServiceConfig({ JWT_SECRET: SECRET, SESSION_RECENT: '4', RATE_LIMIT_RPS: '7', JWT_EXPIRY: '30m', HTTP_ADDR: ':9000', ADMIN_ADDR: '127.0.0.1:9001' }, { embedded: false });
      p.assert(set.sessionRecent === 4 && set.rateLimitRps === 7 && set.tokens.expiryMs === 1_800_000 && set.httpAddr.port === 9000 && set.adminAddr.port === 9001, `variables are not honoured: ${JSON.stringify(set)}`);
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'configuration-required-variables',
    rules: ['CONFIG-required', 'LIFE-3-missing-env', 'CONFIG-no-secret-echo', 'CONFIG-own-vars'],
    async run(p) {
      const missing = await rejects(p, async () => loadServiceConfig({}, { embedded: false }), 'config without JWT_SECRET');
      p.assert(missing instanceof ConfigError && missing.message.includes('JWT_SECRET'), `JWT_SECRET: ${missing.message}`);
      const logger = createLogger('error', new LogCapture());
      for (const name of ['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL']) {
        const env = { ...REAL_ENV, [name]: undefined };
        const error = await rejects(p, () => createRealBackends(env, logger), `backends without ${name}`);
        p.assert(error instanceof ConfigError && error.message.includes(name), `without ${name}: ${error.message}`);
        p.assert(!error.message.includes('hunter2'), `the error for ${name} echoes the DSN password`);
      }
      const short = throws(p, () => new TokenService('hunter2-short', 1000), Error, 'a too short JWT_SECRET');
      p.assert(!short.message.includes('hunter2'), 'the JWT_SECRET error echoes the secret');
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'configuration-formats',
    rules: ['CONFIG-formats', 'CONFIG-no-secret-echo'],
    async run(p) {
      const logger = createLogger('error', new LogCapture());
      const bad: [string, Env][] = [
        ['REDIS_ADDR with a scheme', { ...REAL_ENV, REDIS_ADDR: 'redis://:pw-hunter2@127.0.0.1:6379' }],
        ['NATS_URL without a scheme', { ...REAL_ENV, NATS_URL: 'user:pw-hunter2@127.0.0.1:4222' }],
      ];
      for (const [label, env] of bad) {
        const error = await rejects(p, () => createRealBackends(env, logger), label);
        p.assert(error instanceof ConfigError, `${label}: ${error.message}`);
        p.assert(!error.message.includes('hunter2'), `${label}: the error echoes the value`);
      }
      for (const [label, env] of [
        ['OTLP_ENDPOINT with a scheme', { JWT_SECRET: SECRET, OTLP_ENDPOINT: 'http://127.0.0.1:4318' }],
        ['JWT_EXPIRY not a duration', { JWT_SECRET: SECRET, JWT_EXPIRY: 'soon' }],
      ] as const) {
        const error = await rejects(p, async () => loadServiceConfig(env, { embedded: false }), label);
        p.assert(error instanceof ConfigError, `${label}: ${error.message}`);
      }
      p.assert(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:4222' }).servers.length === 1, 'a NATS URL with a scheme is refused');
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'credentials-are-scrypt-hashes',
    rules: ['SVC-credential-store', 'AUTH-10-credentials'],
    async run(p) {
      const hash = await hashPassword('correct horse');
      p.assert(/^scrypt\$\d+\$\d+\$\d+\$[\w-]+\$[\w-]+$/.test(hash), `stored hash format is ${hash.split('$')[0]}…, expected scrypt$N$r$p$salt$hash`);
      p.assert(!hash.includes('correct horse'), 'the hash contains the password');
      p.assert((await verifyPassword('correct horse', hash)) && !(await verifyPassword('wrong', hash)), 'verification does not distinguish passwords');
      const logger = createLogger('error', new LogCapture());
      const backends = await createEmbeddedBackends(logger, { seedDemoUsers: false });
      await backends.credentials.add({ id: 'u-1', username: 'known', passwordHash: await hashPassword('pw', { N: 1024, r: 8, p: 1 }) });
      const auth = new AuthService(backends.credentials, new TokenService(SECRET, 60_000));
      const unknown = await rejects(p, () => auth.login('unknown', 'pw'), 'login of an unknown user');
      const wrong = await rejects(p, () => auth.login('known', 'nope'), 'login with a wrong password');
      p.assert(unknown instanceof ErrInvalidCredentials && wrong instanceof ErrInvalidCredentials && unknown.message === wrong.message, 'unknown user and wrong password are distinguishable');
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'grpc-contract-message-names',
    rules: ['GRPC-message-names', 'GRPC-service', 'GRPC-fields'],
    async run(p) {
      const expected: Record<string, [string, string]> = {
        Login: ['LoginRequest', 'LoginResponse'],
        CreateOrder: ['CreateOrderRequest', 'Order'],
        GetOrder: ['GetOrderRequest', 'Order'],
        ListOrders: ['ListOrdersRequest', 'ListOrdersResponse'],
        Recent: ['RecentRequest', 'RecentResponse'],
      };
      const service = ORDERS_PROTO['ordersv1.Orders'] as Record<string, { path: string; requestType: { type: { name: string } }; responseType: { type: { name: string } }; requestStream: boolean; responseStream: boolean }>;
      p.assert(JSON.stringify(Object.keys(service).sort()) === JSON.stringify(Object.keys(expected).sort()), `methods are ${Object.keys(service).join(', ')}`);
      for (const [method, [request, response]] of Object.entries(expected)) {
        const def = service[method]!;
        p.assert(def.path === `/ordersv1.Orders/${method}`, `${method} full name is ${def.path}`);
        p.assert(def.requestType.type.name === request && def.responseType.type.name === response, `${method} is ${def.requestType.type.name} → ${def.responseType.type.name}`);
        p.assert(!def.requestStream && !def.responseStream, `${method} is not unary`);
      }
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'cache-entries-live-five-minutes',
    rules: ['SVC-cache-ttl', 'SVC-cache-aside'],
    async run(p) {
      p.assert(redisConfigFromEnv({ REDIS_ADDR: '127.0.0.1:6379' }).ttlSeconds === 300, 'the Redis cache TTL is not 300 s');
      let now = Date.parse('2030-01-01T00:00:00Z');
      const cache = new MemoryOrderCache({ clock: { now: () => new Date(now) } });
      const order = { id: '6f1c1f7e-0000-4000-8000-000000000001', userId: 'u', item: 'x', quantity: 1, status: 'pending' as const, createdAt: new Date(now) };
      await cache.set(order);
      now += 299_000;
      p.assert((await cache.get(order.id)) !== undefined, 'the fake cache dropped an entry before 5 minutes');
      now += 1_000;
      p.assert((await cache.get(order.id)) === undefined, 'the fake cache kept an entry past 5 minutes');
    },
  },
  {
    kind: 'process',
    per: 'once',
    name: 'order-placed-subject',
    rules: ['EVT-6-subject-payload'],
    async run(p) {
      p.assert(ORDER_PLACED_SUBJECT === 'orders.placed', `subject constant is ${ORDER_PLACED_SUBJECT}`);
      const bus = new NatsEventBus(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:1' }), createLogger('error', new LogCapture()));
      p.assert(bus.subject === 'orders.placed', `the broker adapter publishes on ${bus.subject}`);
    },
  },
];

export const PROCESS_CORE_CASES: Case[] = cases;
