import { isValidSpanId, isValidTraceId, SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { flow, type Case, type FlowContext } from '../case-model.ts';
import type { SeenSpan } from '../targets/otlp-receiver.ts';

/** Spec 4.3 rule 2 and 4.5 as seen from outside: log lines, the scrape, the spans. */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses the Prometheus text format's samples (no escapes beyond \" are produced by our labels). */
export function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of one metric whose labels include these. */
export function sampleSum(samples: readonly Sample[], name: string, labels: Readonly<Record<string, string>> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

const counter = (samples: readonly Sample[], labels: Readonly<Record<string, string>>): number =>
  sampleSum(samples, 'orders_http_requests_total', labels);

/** The spans of one request path, from the target's exporter or the runner's OTLP receiver alike. */
function spansWithPath(t: FlowContext, path: string): SeenSpan[] {
  return t.spans().filter((s) => s.attributes['url.path'] === path);
}

/**
 * Spec 4.5 "Request duration in seconds", checked by the unit of an observed value. The service observes a
 * login after the client sent it, and the observation is in the scrape the client reads last, so in
 * seconds it cannot exceed the client's own measure of that span: `observed <= elapsed`. Milliseconds (or
 * any larger unit) multiply the observation by 1000: a login verifies a password hash (scrypt, a
 * millisecond or more of server time), which then reads as a second or more against a round trip of a few
 * milliseconds. No wall-clock bound is asserted: both sides measure the same interval, each with its own clock.
 */
async function checkLoginObservedInSeconds(t: FlowContext, family: string, labels: Readonly<Record<string, string>>): Promise<void> {
  const me = await t.user();
  const count = (samples: readonly Sample[]): number => sampleSum(samples, `${family}_count`, labels);
  const before = parseScrape(await t.scrape());
  const startedAt = performance.now();
  t.check(await t.driver.login({ username: me.username, password: me.password }), { http: { status: 200 }, grpc: { code: 'OK' } }, 'login');
  // The observation may land just after the answer was written: scrape until it is there.
  const after = await t.waitFor(async () => {
    const scraped = parseScrape(await t.scrape());
    return count(scraped) !== count(before) && scraped;
  }, `the login observed in ${family}`);
  const elapsedSeconds = (performance.now() - startedAt) / 1000;
  const observations = count(after) - count(before);
  t.assert(observations === 1, `${family}_count{${JSON.stringify(labels)}} grew by ${observations} for one login`);
  const observed = sampleSum(after, `${family}_sum`, labels) - sampleSum(before, `${family}_sum`, labels);
  t.assert(observed > 0, `${family}_sum grew by ${observed} for one login: a duration is positive`);
  t.assert(
    observed <= elapsedSeconds,
    `${family}_sum grew by ${observed} for one login, more than the ${elapsedSeconds.toFixed(4)} s the client measured from sending it to reading the scrape: not seconds`,
  );
}

export const OBSERVABILITY_CASES: Case[] = [
  flow(
    'one-request-log-line-per-request',
    ['CHAIN-R2-request-log', 'LOG-json', 'TRACE-log-ids'],
    { api: 'rest', needs: ['logs'] },
    async (t) => {
      const path = `/orders/${crypto.randomUUID()}`;
      const me = await t.user();
      await t.driver.raw!({ method: 'GET', path, headers: { authorization: me.auth } });
      const line = await t.waitFor(() => t.logs().find((l) => l.msg === 'request' && l['path'] === path), '`request` log line');
      t.assert(
        line['method'] === 'GET' && line['status'] === 404,
        `request line is ${JSON.stringify(line)}, expected method GET and status 404`,
      );
      t.assert(
        JSON.stringify(Object.keys(line).sort()) === '["level","method","msg","path","span_id","status","time","trace_id"]',
        `request line has keys ${Object.keys(line).join(', ')}: only time, level, msg, method, path, status, trace_id, span_id`,
      );
      t.assert(
        /^[0-9a-f]{32}$/.test(String(line['trace_id'])) && /^[0-9a-f]{16}$/.test(String(line['span_id'])),
        `request line trace ids ${String(line['trace_id'])} / ${String(line['span_id'])} are not W3C hex ids`,
      );
      await t.sleep(20);
      t.assert(
        t.logs().filter((l) => l.msg === 'request' && l['path'] === path).length === 1,
        'more than one request line for one request',
      );
      for (const l of t.logs()) {
        t.assert(typeof l.time === 'string' && !Number.isNaN(Date.parse(l.time)), `log line without an ISO time: ${JSON.stringify(l)}`);
        t.assert(['debug', 'info', 'warn', 'error', 'fatal'].includes(l.level), `log line with level ${String(l.level)}`);
        t.assert(typeof l.msg === 'string', 'log line without msg');
      }
    },
  ),
  flow('bodies-and-secrets-never-logged', ['CHAIN-R2-request-log'], { api: 'rest', needs: ['logs'] }, async (t) => {
    const me = await t.user();
    const marker = `body-marker-${crypto.randomUUID()}`;
    const from = t.logs().length;
    await t.driver.raw!({
      method: 'POST',
      path: '/orders',
      headers: { authorization: me.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ item: 'x', quantity: 1, note: marker }),
    });
    // The request line is the last one a request writes: once it is there, the rest is too.
    await t.waitFor(
      () =>
        t
          .logs()
          .slice(from)
          .some((l) => l.msg === 'request' && l['path'] === '/orders' && l['method'] === 'POST'),
      'the request line of the POST',
    );
    // The --embedded banner names the public demo logins on purpose (README); nothing else may.
    const text = t.target.logs!.raw.filter((line) => !line.includes('embedded mode: in-memory backends')).join('\n');
    t.assert(!text.includes(marker), 'a request body reached the logs');
    t.assert(!text.includes(me.password), 'a password reached the logs');
    t.assert(!text.includes(me.token), 'a token reached the logs');
    // An instance by URL whose secret the runner was not given (CONFORMANCE_JWT_SECRET) is spared this one check.
    const secret = t.target.jwtSecret;
    t.assert(secret === undefined || !text.includes(secret), 'JWT_SECRET reached the logs');
  }),
  flow(
    'metrics-route-pattern-and-status',
    ['METRICS-route-label', 'METRICS-status', 'METRICS-no-raw-ids', 'METRICS-families'],
    { api: 'rest', needs: ['admin'] },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      const before = parseScrape(await t.scrape());
      t.check(await t.driver.getOrder(me.auth, id), { http: { status: 200 } }, 'get');
      t.check(await t.driver.getOrder(me.auth, crypto.randomUUID()), { http: { status: 404 } }, 'get unknown');
      const text = await t.scrape();
      const after = parseScrape(text);
      const route = 'GET /orders/{id}';
      t.assert(
        counter(after, { method: 'GET', route, status: '200' }) - counter(before, { method: 'GET', route, status: '200' }) === 1,
        `orders_http_requests_total{route="${route}",status="200"} did not grow by exactly 1`,
      );
      t.assert(
        counter(after, { method: 'GET', route, status: '404' }) - counter(before, { method: 'GET', route, status: '404' }) === 1,
        `orders_http_requests_total{route="${route}",status="404"} did not grow by exactly 1`,
      );
      t.assert(
        after.some(
          (s) =>
            s.name === 'orders_http_request_duration_seconds_count' &&
            s.labels['route'] === route &&
            s.labels['method'] === 'GET' &&
            s.labels['status'] === undefined,
        ),
        'no duration histogram with method and route (and no status) labels',
      );
      for (const s of after.filter((x) => x.name === 'orders_http_requests_total')) {
        t.assert(/^[1-5]\d\d$/.test(s.labels['status'] ?? ''), `status label ${s.labels['status']} is not a numeric status`);
        t.assert(
          JSON.stringify(Object.keys(s.labels).sort()) === '["method","route","status"]',
          `counter labels are ${Object.keys(s.labels).join(', ')}`,
        );
      }
      t.assert(!text.includes(id), 'an order id appears in the scrape');
      t.assert(!/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.test(text), 'a UUID appears in the scrape');
      t.assert(!after.some((s) => (s.labels['route'] ?? '').includes(':id')), 'a route label uses the colon form');
    },
  ),
  flow('metrics-unmatched-route', ['METRICS-unmatched', 'METRICS-no-raw-ids'], { api: 'rest', needs: ['admin'] }, async (t) => {
    const raw = `/no-such-route/${crypto.randomUUID()}`;
    const before = parseScrape(await t.scrape());
    t.check(await t.driver.raw!({ method: 'GET', path: raw }), { http: { status: 404 } }, 'unknown path');
    const text = await t.scrape();
    const after = parseScrape(text);
    t.assert(
      counter(after, { method: 'GET', route: 'unmatched', status: '404' }) -
        counter(before, { method: 'GET', route: 'unmatched', status: '404' }) ===
        1,
      'route="unmatched" did not grow by 1 for an unknown path',
    );
    t.assert(!text.includes('/no-such-route'), 'the raw path appears in the scrape');
  }),
  flow('metrics-status-of-a-plain-200', ['METRICS-status'], { api: 'rest', needs: ['admin'] }, async (t) => {
    const before = parseScrape(await t.scrape());
    t.check(await t.driver.raw!({ method: 'GET', path: '/swagger/' }), { http: { status: 200 } }, 'GET /swagger/');
    const after = parseScrape(await t.scrape());
    const grew = after.filter(
      (s) => s.name === 'orders_http_requests_total' && s.labels['method'] === 'GET' && s.value > counter(before, s.labels),
    );
    t.assert(
      grew.length === 1 && grew[0]!.labels['status'] === '200',
      `the docs page was counted as ${JSON.stringify(grew.map((g) => g.labels))}, expected one sample with status 200`,
    );
  }),
  flow('metrics-histogram-buckets', ['METRICS-buckets', 'METRICS-families'], { api: 'rest', needs: ['admin'] }, async (t) => {
    await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' });
    const buckets = parseScrape(await t.scrape())
      .filter((s) => s.name === 'orders_http_request_duration_seconds_bucket' && s.labels['route'] === 'GET /openapi.yaml')
      .map((s) => s.labels['le']);
    const expected = ['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '+Inf'];
    t.assert(
      JSON.stringify(buckets) === JSON.stringify(expected),
      `buckets are ${JSON.stringify(buckets)}, expected ${JSON.stringify(expected)}`,
    );
  }),
  flow(
    'span-per-request-named-by-pattern',
    ['TRACE-span-name', 'TRACE-attributes', 'TRACE-service-name', 'TRACE-no-endpoint', 'TRACE-server-kind'],
    { api: 'rest', needs: ['spans'] },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      t.check(await t.driver.getOrder(me.auth, id), { http: { status: 200 } }, 'get');
      const path = `/orders/${id}`;
      const spans = await t.waitFor(() => (spansWithPath(t, path).length > 0 ? spansWithPath(t, path) : undefined), `span for GET ${path}`);
      t.assert(spans.length === 1, `${spans.length} spans for one request`);
      const span = spans[0]!;
      t.assert(span.name === 'GET /orders/{id}', `span name is ${span.name}, expected GET /orders/{id}`);
      t.assert(span.kind === SpanKind.SERVER, `span kind is ${span.kind}, expected SERVER`);
      t.assert(
        span.attributes['http.route'] === '/orders/{id}',
        `http.route is ${String(span.attributes['http.route'])}, expected /orders/{id}`,
      );
      t.assert(
        span.attributes['http.request.method'] === 'GET',
        `http.request.method is ${String(span.attributes['http.request.method'])}`,
      );
      t.assert(
        span.attributes['http.response.status_code'] === 200,
        `http.response.status_code is ${String(span.attributes['http.response.status_code'])}`,
      );
      t.assert(span.attributes['url.path'] === path, 'url.path is not the request path');
      // An instance by URL runs an executable the runner does not know: any orders-<executable> name.
      const serviceName = String(span.resource['service.name']);
      t.assert(
        t.target.backend === 'external' ? /^orders-\S+$/.test(serviceName) : serviceName === `orders-${t.transport.name}`,
        `service.name is ${serviceName}`,
      );
      t.assert(isValidTraceId(span.traceId) && isValidSpanId(span.spanId), 'span has invalid trace or span id');
      t.assert((span.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED, 'span is not sampled');
    },
  ),
  flow('span-of-unmatched-request', ['TRACE-span-name', 'TRACE-attributes'], { api: 'rest', needs: ['spans'] }, async (t) => {
    const path = `/no-such-route/${crypto.randomUUID()}`;
    t.check(await t.driver.raw!({ method: 'GET', path }), { http: { status: 404 } }, 'unknown path');
    const span = await t.waitFor(() => spansWithPath(t, path)[0], `span for ${path}`);
    t.assert(span.name === 'http.request', `span name is ${span.name}, expected http.request`);
    t.assert(span.attributes['http.route'] === undefined, `an unmatched request has http.route ${String(span.attributes['http.route'])}`);
    t.assert(
      span.attributes['http.response.status_code'] === 404,
      `http.response.status_code is ${String(span.attributes['http.response.status_code'])}`,
    );
  }),
  // Rule TRACE-server-kind (chosen): a span's status is ERROR for a 5xx answer only; a 4xx is the caller's
  // mistake and leaves it UNSET (OpenTelemetry's HTTP server conventions).
  flow('span-status-error-only-for-5xx', ['TRACE-server-kind'], { api: 'rest', needs: ['spans', 'faults'] }, async (t) => {
    const me = await t.user();
    const missing = `/orders/${crypto.randomUUID()}`;
    t.check(
      await t.driver.raw!({ method: 'GET', path: missing, headers: { authorization: me.auth } }),
      { http: { status: 404 } },
      'unknown order',
    );
    const failing = `/orders/${crypto.randomUUID()}`;
    await t.target.simulator!.set('database', { failNext: 1 });
    t.check(
      await t.driver.raw!({ method: 'GET', path: failing, headers: { authorization: me.auth } }),
      { http: { status: 500 } },
      'get with the store failing',
    );
    for (const [path, code] of [
      [missing, SpanStatusCode.UNSET],
      [failing, SpanStatusCode.ERROR],
    ] as const) {
      const span = await t.waitFor(() => spansWithPath(t, path)[0], `span for GET ${path}`);
      t.assert(
        span.statusCode === code,
        `the span of a ${String(span.attributes['http.response.status_code'])} has status ${span.statusCode}, expected ${code}`,
      );
    }
  }),
  flow(
    'span-continues-the-callers-traceparent',
    ['TRACE-context', 'TRACE-log-ids'],
    { api: 'rest', needs: ['spans', 'logs'] },
    async (t) => {
      const traceId = crypto.randomUUID().replaceAll('-', '');
      const parent = '00f067aa0ba902b7';
      const path = `/no-such-route/${crypto.randomUUID()}`;
      await t.driver.raw!({ method: 'GET', path, headers: { traceparent: `00-${traceId}-${parent}-01` } });
      const span = await t.waitFor(() => spansWithPath(t, path)[0], `span for ${path}`);
      t.assert(span.traceId === traceId, `span trace id ${span.traceId}, expected the caller's ${traceId}`);
      t.assert(span.parentSpanId === parent, `span parent ${String(span.parentSpanId)}, expected ${parent}`);
      const line = await t.waitFor(() => t.logs().find((l) => l.msg === 'request' && l['path'] === path), '`request` log line');
      t.assert(
        line['trace_id'] === traceId && line['span_id'] === span.spanId,
        `request line carries ${String(line['trace_id'])}/${String(line['span_id'])}, not the span's ids`,
      );
    },
  ),
  flow(
    'grpc-layer-spans-and-metrics',
    ['TRACE-grpc', 'METRICS-grpc'],
    { transports: ['grpc'], api: 'grpc', needs: ['spans', 'admin'] },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      const labels = { grpc_type: 'unary', grpc_service: 'ordersv1.Orders', grpc_method: 'GetOrder' };
      const before = parseScrape(await t.scrape());
      const spansBefore = t.spans().length;
      t.check(await t.driver.getOrder(me.auth, id), { grpc: { code: 'OK' } }, 'GetOrder');
      t.check(await t.driver.getOrder(me.auth, crypto.randomUUID()), { grpc: { code: 'NOT_FOUND' } }, 'GetOrder unknown');
      // A path the server does not serve: grpc_service and grpc_method `unknown`, counted as a unary call.
      t.check(
        await t.driver.rawRpc!('/ordersv1.Orders/NoSuchMethod', new Uint8Array()),
        { grpc: { code: 'UNIMPLEMENTED' } },
        'unknown method',
      );
      const after = parseScrape(await t.scrape());
      const unserved = { grpc_type: 'unary', grpc_service: 'unknown', grpc_method: 'unknown', grpc_code: 'Unimplemented' };
      t.assert(
        sampleSum(after, 'grpc_server_handled_total', unserved) - sampleSum(before, 'grpc_server_handled_total', unserved) === 1,
        `grpc_server_handled_total${JSON.stringify(unserved)} did not grow by 1 for an unknown method`,
      );
      const grew = (name: string, extra?: Record<string, string>): number =>
        sampleSum(after, name, { ...labels, ...extra }) - sampleSum(before, name, { ...labels, ...extra });
      t.assert(
        grew('grpc_server_started_total') === 2,
        `grpc_server_started_total{GetOrder} grew by ${grew('grpc_server_started_total')}, expected 2`,
      );
      t.assert(grew('grpc_server_handled_total', { grpc_code: 'OK' }) === 1, 'grpc_server_handled_total{grpc_code="OK"} did not grow by 1');
      t.assert(
        grew('grpc_server_handled_total', { grpc_code: 'NotFound' }) === 1,
        'grpc_server_handled_total{grpc_code="NotFound"} did not grow by 1',
      );
      t.assert(grew('grpc_server_handling_seconds_count') === 2, 'grpc_server_handling_seconds_count{GetOrder} did not grow by 2');
      // A process exports its spans in batches: wait for both calls' spans to arrive.
      const spans = await t.waitFor(() => {
        const seen = t
          .spans()
          .slice(spansBefore)
          .filter((s) => s.attributes['rpc.method'] === 'GetOrder');
        return seen.length >= 2 && seen;
      }, 'the spans of both GetOrder calls');
      t.assert(spans.length === 2, `${spans.length} GetOrder spans for two calls`);
      t.assert(
        spans.every(
          (s) =>
            s.kind === SpanKind.SERVER &&
            s.name === 'ordersv1.Orders/GetOrder' &&
            s.attributes['rpc.system'] === 'grpc' &&
            s.attributes['rpc.service'] === 'ordersv1.Orders',
        ),
        `GetOrder spans are ${JSON.stringify(spans.map((s) => [s.name, s.kind, s.attributes]))}`,
      );
      t.assert(
        JSON.stringify(spans.map((s) => s.attributes['rpc.grpc.status_code'])) === '[0,5]',
        `rpc.grpc.status_code of the two calls: ${JSON.stringify(spans.map((s) => s.attributes['rpc.grpc.status_code']))}`,
      );
    },
  ),
  flow('metrics-duration-in-seconds', ['METRICS-families'], { api: 'rest', needs: ['admin'] }, (t) =>
    checkLoginObservedInSeconds(t, 'orders_http_request_duration_seconds', { method: 'POST', route: 'POST /auth/login' }),
  ),
  flow('grpc-handling-in-seconds', ['METRICS-grpc'], { transports: ['grpc'], api: 'grpc', needs: ['admin'] }, (t) =>
    checkLoginObservedInSeconds(t, 'grpc_server_handling_seconds', {
      grpc_type: 'unary',
      grpc_service: 'ordersv1.Orders',
      grpc_method: 'Login',
    }),
  ),
  // Rule CHAIN-R2-request-log (chosen): `path` is the URL path; the query string is neither logged nor traced.
  flow('request-log-path-without-query', ['CHAIN-R2-request-log'], { api: 'rest', needs: ['logs'] }, async (t) => {
    const me = await t.user();
    const path = `/orders/${crypto.randomUUID()}`;
    const marker = `marker-${crypto.randomUUID()}`;
    t.check(
      await t.driver.raw!({ method: 'GET', path: `${path}?limit=1&note=${marker}`, headers: { authorization: me.auth } }),
      { http: { status: 404 } },
      'GET with a query',
    );
    const line = await t.waitFor(
      () => t.logs().find((l) => l.msg === 'request' && String(l['path']).startsWith(path)),
      '`request` log line',
    );
    t.assert(line['path'] === path, `request line path is ${String(line['path'])}, expected ${path} (no query string)`);
    t.assert(!t.target.logs!.raw.some((raw) => raw.includes(marker)), 'the query string reached the logs');
  }),
  flow('span-url-path-without-query', ['TRACE-attributes'], { api: 'rest', needs: ['spans'] }, async (t) => {
    const path = `/no-such-route/${crypto.randomUUID()}`;
    t.check(await t.driver.raw!({ method: 'GET', path: `${path}?limit=1&offset=2` }), { http: { status: 404 } }, 'GET with a query');
    const span = await t.waitFor(() => t.spans().find((s) => String(s.attributes['url.path']).startsWith(path)), `span for ${path}`);
    t.assert(
      span.attributes['url.path'] === path,
      `url.path is ${String(span.attributes['url.path'])}, expected ${path} (no query string)`,
    );
  }),
];
