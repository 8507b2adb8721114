import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Env } from '../../src/config/env.ts';
import type { Backends } from '../../src/composition/backends.ts';
import type { App } from '../../src/composition/create-app.ts';
import type { TransportFactory } from '../../src/transports/transport.ts';
import type { EmbeddedBackends } from '../../embedded/backends.ts';
import type { RealBackendIsolation } from '../../src/composition/real-backends.ts';
import { startService } from '../../src/composition/start-service.ts';
import { hashPassword } from '../../src/service/password-hasher.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { PlatformTimeouts } from '../../src/transports/http/server/timeouts.ts';
import { LogCapture } from './log-capture.ts';

export type BackendKind = 'fake' | 'real';

export interface InProcessOptions {
  readonly transport: TransportFactory;
  readonly serviceName?: string;
  readonly backend?: BackendKind;
  /** Extra or overriding variables (RATE_LIMIT_RPS, SESSION_RECENT, JWT_EXPIRY…). */
  readonly env?: Env;
  readonly sessionLingerMs?: number;
  readonly sessionCap?: number;
  /** Shorter timeouts that Node's servers enforce (src/transports/http/server/timeouts.ts). */
  readonly platformTimeouts?: PlatformTimeouts;
  /** The speed ring on, as the executables run it (speed/README.md); the plain core otherwise. */
  readonly speed?: boolean;
}

export interface InProcessApp {
  readonly app: App;
  readonly baseUrl: string;
  readonly adminUrl: string;
  readonly port: number;
  readonly adminPort: number;
  readonly logs: LogCapture;
  readonly spans: InMemorySpanExporter;
  /** Set when backend is 'fake': the fakes, with their trouble switches. */
  readonly fakes: EmbeddedBackends | undefined;
  readonly backends: Backends;
  readonly jwtSecret: string;
  /** Adds a user to the credential store (fake or real) and returns its password. */
  addUser(username: string, password?: string): Promise<string>;
  /** Adds a user (password `<username>-password`) and logs it in through POST /auth/login; returns its token. */
  login(username: string): Promise<string>;
  /** Aborts the run signal and waits for every run and stop, as SIGTERM does. */
  stop(): Promise<void>;
}

/**
 * The scrypt cost of the users tests add: the hash format and the checks are the production ones (rule
 * SVC-credential-store, src/service/password-hasher.test.ts), at the lowest cost scrypt takes. Thousands of
 * logins across the conformance columns at the production cost were a fifth of their CPU.
 */
export const TEST_PASSWORD_COST = { N: 16, r: 1, p: 1 } as const;

/** The variables naming the real backends (docs/real-backends.md). */
export const BACKEND_VARIABLES = ['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL'] as const;

export function realBackendsConfigured(env: Env = process.env): boolean {
  return BACKEND_VARIABLES.every((name) => Boolean(env[name]));
}

/**
 * Starts one executable's whole composition in this process on port 0 through `startService`, as `runMain` does, but
 * with captured logs, an in-memory span exporter and, for backend 'real', an isolated schema, key
 * prefix and subject so parallel runs never collide; the plain core unless `speed` asks for the ring.
 */
export async function startInProcess(options: InProcessOptions): Promise<InProcessApp> {
  const backendKind = options.backend ?? 'fake';
  const jwtSecret = randomBytes(32).toString('base64url');
  const env: Env = {
    HTTP_ADDR: '127.0.0.1:0',
    ADMIN_ADDR: '127.0.0.1:0',
    JWT_SECRET: jwtSecret,
    RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'debug',
    ...(backendKind === 'real'
      ? { POSTGRES_DSN: process.env['POSTGRES_DSN'], REDIS_ADDR: process.env['REDIS_ADDR'], NATS_URL: process.env['NATS_URL'] }
      : {}),
    ...options.env,
  };
  const logs = new LogCapture();
  const logger = createLogger('debug', logs);
  const isolation: RealBackendIsolation = {
    schema: `t_${randomBytes(6).toString('hex')}`,
    uniqueSuffix: randomBytes(6).toString('hex'),
    dropSchemaOnStop: true,
  };
  const spans = new InMemorySpanExporter();
  const service = await startService({
    serviceName: options.serviceName ?? 'orders-test',
    transport: options.transport,
    env,
    logger,
    embedded: backendKind === 'fake',
    isolation,
    // Loaded only when asked for: without speed/, every target but those asking for it still starts.
    speed: options.speed === true ? (await import('../../speed/ring.ts')).speedRing : undefined,
    app: {
      spanProcessors: [new SimpleSpanProcessor(spans)],
      sessionLingerMs: options.sessionLingerMs,
      sessionCap: options.sessionCap,
      platformTimeouts: options.platformTimeouts,
    },
  });
  const { app, backends } = service;
  const { api: port, admin: adminPort } = await service.ready;
  const baseUrl = `http://127.0.0.1:${port}`;
  const addUser = async (username: string, password = `${username}-password`): Promise<string> => {
    await backends.credentials.add({
      id: crypto.randomUUID(),
      username,
      passwordHash: await hashPassword(password, TEST_PASSWORD_COST),
    });
    return password;
  };
  return {
    app,
    baseUrl,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    port,
    adminPort,
    logs,
    spans,
    // The embedded ring's backends are its fakes (embedded/backends.ts); src/ knows them only as Backends.
    fakes: service.embedded?.backends as EmbeddedBackends | undefined,
    backends,
    jwtSecret,
    addUser,
    async login(username) {
      const body = JSON.stringify({ username, password: await addUser(username) });
      const reply = await fetch(`${baseUrl}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      if (reply.status !== 200) throw new Error(`login ${username}: ${reply.status} ${await reply.text()}`);
      return ((await reply.json()) as { token: string }).token;
    },
    stop: () => service.stop(),
  };
}
