// The operators' pack against a real Prometheus (Debian's `prometheus`, started here on loopback with a
// temporary configuration and data directory): it scrapes two running services' admin listeners, an
// `--embedded` orders-grpc (REST, gRPC, the simulator for server errors) and an orders-stdlib on the
// machine's real Postgres/Redis/NATS (the pool and backend-connection families exist only there); every
// query of every panel of deploy/grafana/orders-dashboard.json must return series, and every rule of
// deploy/prometheus/alerts.yml must evaluate without error. (`promtool check rules` and `promtool test
// rules` run before this file: scripts/test-operations.ts.)
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.ts';
import { dropSchemaRun } from '../support/replica-kit.ts';
import { spawnBin, type SpawnedBin } from '../support/spawn-bin.ts';
import { prometheusVersion, startPrometheus, type Prometheus } from './prometheus.ts';

const DASHBOARD = fileURLToPath(new URL('../../deploy/grafana/orders-dashboard.json', import.meta.url));
const RULES = fileURLToPath(new URL('../../deploy/prometheus/alerts.yml', import.meta.url));
const JWT_SECRET = randomBytes(32).toString('base64url');
const backends = {
  dsn: process.env['POSTGRES_DSN'] ?? '',
  redisAddr: process.env['REDIS_ADDR'] ?? '',
  natsUrl: process.env['NATS_URL'] ?? '',
};

interface Panel {
  readonly title: string;
  readonly targets: readonly { readonly refId: string; readonly expr: string }[];
}
const panels = (JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] }).panels;

/** What Grafana substitutes before it sends a query: the dashboard's variables and $__rate_interval. */
function asGrafanaSends(expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replaceAll('$job', 'orders');
}

interface Service {
  readonly bin: SpawnedBin;
  readonly api: string;
  readonly admin: string;
}

async function start(bin: string, args: string[], env: Record<string, string>): Promise<Service> {
  const [api, admin] = [await freePort(), await freePort()];
  const process = spawnBin(bin, args, {
    JWT_SECRET,
    HTTP_ADDR: `127.0.0.1:${api}`,
    ADMIN_ADDR: `127.0.0.1:${admin}`,
    LOG_LEVEL: 'warn',
    ...env,
  });
  const service = { bin: process, api: `http://127.0.0.1:${api}`, admin: `127.0.0.1:${admin}` };
  await process.waitReady(`http://${service.admin}`);
  return service;
}

async function call(url: string, init: RequestInit & { json?: unknown } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const { json, ...rest } = init;
  const response = await fetch(url, {
    ...rest,
    ...(json === undefined
      ? {}
      : { body: JSON.stringify(json), headers: { 'content-type': 'application/json', ...(rest.headers as Record<string, string>) } }),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const version = prometheusVersion();
const missing = [
  ...(version === undefined ? ['prometheus (Debian: apt-get install prometheus)'] : []),
  ...Object.entries(backends)
    .filter(([, v]) => v === '')
    .map(([k]) => k),
];

describe('deploy/grafana/orders-dashboard.json and deploy/prometheus/alerts.yml on a real Prometheus', () => {
  let embedded: Service;
  let real: Service;
  let prometheus: Prometheus;
  let auth: Record<string, string>;
  const schema = `ops_${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`test:operations needs ${missing.join(', ')}`);
    [embedded, real] = await Promise.all([
      start('bin/orders-grpc.ts', ['--embedded'], { RATE_LIMIT_RPS: '5' }),
      start('bin/orders-stdlib.ts', [], {
        POSTGRES_DSN: backends.dsn,
        POSTGRES_SCHEMA: schema,
        REDIS_ADDR: backends.redisAddr,
        NATS_URL: backends.natsUrl,
      }),
    ]);
    prometheus = await startPrometheus([embedded.admin, real.admin], [RULES]);

    // Traffic that moves every family a panel shows: REST and gRPC calls, server errors (the simulator
    // fails the next database operations), and 429s (RATE_LIMIT_RPS=5: a burst beyond the bucket).
    const login = await call(`${embedded.api}/auth/login`, { method: 'POST', json: { username: 'alice', password: 'alice-password' } });
    expect(login.status).toBe(200);
    auth = { authorization: `Bearer ${String(login.body['token'])}` };
    const created = await call(`${embedded.api}/orders`, { method: 'POST', headers: auth, json: { item: 'dashboard', quantity: 1 } });
    expect(created.status).toBe(201);
    expect((await call(`${embedded.api}/orders/${String(created.body['id'])}`, { headers: auth })).status).toBe(200);
    const grpc = spawnBin('examples/grpc-client.ts', [], { GRPC_ADDR: embedded.api.replace('http://', '') });
    expect((await grpc.exited).code).toBe(0);
    await sleep(1_100); // the bucket refills: the next requests are judged on the simulator, not the limiter
    expect((await call(`http://${embedded.admin}/simulator/components/database`, { method: 'PUT', json: { failNext: 2 } })).status).toBe(
      200,
    );
    const failed = [await call(`${embedded.api}/orders`, { headers: auth }), await call(`${embedded.api}/orders`, { headers: auth })];
    expect(failed.map((r) => r.status)).toContain(500);
    const burst = await Promise.all(Array.from({ length: 20 }, () => call(`${embedded.api}/me/recent`, { headers: auth })));
    expect(burst.map((r) => r.status)).toContain(429);
    const logins = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(`${embedded.api}/auth/login`, { method: 'POST', json: { username: 'alice', password: 'alice-password' } }),
      ),
    );
    expect(logins.map((r) => r.status)).toContain(429);
  });

  afterAll(async () => {
    await prometheus?.stop();
    embedded?.bin.kill();
    real?.bin.kill();
    if (missing.length === 0) await dropSchemaRun(backends, schema);
  });

  it(`every panel's every query returns series (${panels.length} panels)`, async () => {
    const found: string[] = [];
    const empty: string[] = [];
    for (const panel of panels) {
      for (const target of panel.targets) {
        const expr = asGrafanaSends(target.expr);
        // Rates need two scrapes after the traffic; the deadline only stops a hang.
        const deadline = Date.now() + 60_000;
        let series = await prometheus.query(expr);
        while (series.length === 0 && Date.now() < deadline) {
          await sleep(500);
          series = await prometheus.query(expr);
        }
        (series.length > 0 ? found : empty).push(`${panel.title} [${target.refId}]: ${series.length} series`);
      }
    }
    console.log(`dashboard panels on ${String(version)}:\n  ${[...found, ...empty].join('\n  ')}`);
    expect(empty).toEqual([]);
    expect(found.length).toBe(panels.reduce((n, p) => n + p.targets.length, 0));
  });

  it('every alerting and recording rule evaluates without error on the scraped series', async () => {
    let rules = await prometheus.rules();
    const deadline = Date.now() + 30_000;
    while (rules.some((r) => r.health === 'unknown') && Date.now() < deadline) {
      await sleep(500);
      rules = await prometheus.rules();
    }
    expect(rules.length).toBeGreaterThan(10);
    expect(rules.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.health} ${r.lastError ?? ''}`)).toEqual([]);
    // The recording rules follow the traffic: more server errors on GET /orders, now that Prometheus has
    // its counters (a series' first sample shows no increase), raise the recorded 5xx ratio above 0.
    await sleep(1_100);
    expect((await call(`http://${embedded.admin}/simulator/components/database`, { method: 'PUT', json: { failNext: 2 } })).status).toBe(
      200,
    );
    const failed = [await call(`${embedded.api}/orders`, { headers: auth }), await call(`${embedded.api}/orders`, { headers: auth })];
    expect(failed.map((r) => r.status)).toContain(500);
    const recorded = 'orders:http_error_ratio:rate5m{route="GET /orders"}';
    const until = Date.now() + 30_000;
    const value = async (): Promise<number> => Number((await prometheus.query(recorded))[0]?.value[1] ?? Number.NaN);
    let ratio = await value();
    while (!(ratio > 0) && Date.now() < until) {
      await sleep(500);
      ratio = await value();
    }
    expect(ratio).toBeGreaterThan(0);
  });
});
