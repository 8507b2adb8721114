import { flow, type Case, type FlowContext } from '../case-model.ts';
import type { Reply } from '../drivers/driver.ts';
import { shapeProblems } from '../runner/expect.ts';

/** The admin listener (spec 2.3, 3.3, 4.2) and what the public listener must not serve (4.1 rule 2). */

interface Node {
  readonly name: string;
  readonly status: string;
  readonly error?: string;
}
interface Report {
  readonly clean: boolean;
  readonly nodes: Node[] | null;
}

function admin(t: FlowContext) {
  const probe = t.driver.admin;
  if (probe === undefined) throw new Error('no admin listener (capability admin)');
  return probe;
}

function report(t: FlowContext, reply: Reply, status: number, label: string): Report {
  t.check(reply, { http: { status, contentType: 'application/json' }, grpc: { code: 'OK' } }, label);
  const problems = shapeProblems('HealthReport', reply.body, label);
  t.assert(problems.length === 0, problems.join('; '));
  return reply.body as Report;
}

/** Admin probes are HTTP whatever the driver, so these flows run once per column on every driver. */
export const ADMIN_CASES: Case[] = [
  flow(
    'healthz-clean',
    [
      'ADMIN-healthz',
      'HEALTH-shape',
      'HEALTH-clean',
      'HEALTH-ok',
      'HEALTH-nodes',
      'SESSION-R5-not-in-health',
      'ADMIN-no-auth',
      'AUTH-9-public',
    ],
    { api: 'rest', needs: ['admin', 'users'] },
    async (t) => {
      // A live session exists while the report is taken: it must not show up (spec 3.2 rule 5).
      const me = await t.user();
      await t.driver.getOrder(me.auth, await t.order(me));
      const body = report(t, await admin(t).healthz(), 200, 'GET /healthz');
      t.assert(body.clean === true, 'clean is not true with every backend up');
      const names = (body.nodes ?? []).map((n) => n.name).sort();
      t.assert(
        JSON.stringify(names) === '["cache","database","publisher"]',
        `health nodes are ${JSON.stringify(names)}, expected cache, database, publisher`,
      );
      for (const node of body.nodes ?? []) {
        t.assert(node.status === 'ok', `node ${node.name} has status ${node.status}`);
        t.assert(!('error' in node), `healthy node ${node.name} carries an error field`);
      }
    },
  ),
  flow(
    'readyz-ready-once-bound',
    ['ADMIN-readyz', 'READY-bound', 'HEALTH-shape', 'SESSION-R5-not-in-health', 'ADMIN-no-auth'],
    { api: 'rest', needs: ['admin'] },
    async (t) => {
      const body = report(t, await admin(t).readyz(), 200, 'GET /readyz');
      t.assert(body.clean === true, 'not ready although the listener is bound');
      t.assert(
        JSON.stringify(body.nodes) === '[{"name":"api","status":"ok"}]',
        `readiness nodes are ${JSON.stringify(body.nodes)}, expected only the public listener (api) ok`,
      );
    },
  ),
  flow('livez-live', ['ADMIN-livez', 'HEALTH-shape', 'ADMIN-no-auth'], { api: 'rest', needs: ['admin'] }, async (t) => {
    const body = report(t, await admin(t).livez(), 200, 'GET /livez');
    t.assert(body.clean === true && body.nodes === null, `liveness is ${JSON.stringify(body)}, expected clean true and nodes null`);
  }),
  flow('livez-ignores-backends', ['ADMIN-livez'], { api: 'rest', needs: ['faults'] }, async (t) => {
    // Every backend down at once: health fails, liveness must not (a restart cures no database outage).
    const simulator = t.target.simulator!;
    for (const component of ['database', 'cache', 'publisher'] as const) await simulator.set(component, { state: 'down' });
    try {
      report(t, await admin(t).healthz(), 503, 'GET /healthz with every backend down');
      const body = report(t, await admin(t).livez(), 200, 'GET /livez with every backend down');
      t.assert(body.clean === true && body.nodes === null, `liveness is ${JSON.stringify(body)} with backends down`);
    } finally {
      await simulator.reset();
    }
  }),
  ...(['database', 'cache', 'publisher'] as const).map((component): Case =>
    flow(
      `healthz-${component}-down`,
      ['ADMIN-healthz', 'HEALTH-clean', 'HEALTH-error-field', 'HEALTH-failing-status', 'ERR-admin-503', 'HEALTH-nodes'],
      { api: 'rest', needs: ['faults'] },
      async (t) => {
        const simulator = t.target.simulator!;
        await simulator.set(component, { state: 'down' });
        let body: Report;
        try {
          body = report(t, await admin(t).healthz(), 503, `GET /healthz with ${component} down`);
        } finally {
          await simulator.set(component, { state: 'up' });
        }
        t.assert(body.clean === false, 'clean is true with a node down');
        const failing = (body.nodes ?? []).find((n) => n.name === component);
        t.assert(failing !== undefined, `no ${component} node in ${JSON.stringify(body.nodes)}`);
        if (failing === undefined) return;
        t.assert(failing.status === 'unavailable', `failing node status is ${failing.status}, expected unavailable`);
        t.assert(typeof failing.error === 'string' && failing.error !== '', 'failing node has no error text');
        for (const node of (body.nodes ?? []).filter((n) => n.name !== component)) {
          t.assert(
            node.status === 'ok' && !('error' in node),
            `node ${node.name} is ${JSON.stringify(node)} although only ${component} is down`,
          );
        }
        report(t, await admin(t).healthz(), 200, 'GET /healthz after recovery');
      },
    ),
  ),
  flow('metrics-scrape-format', ['ADMIN-metrics', 'METRICS-families', 'ADMIN-no-auth'], { api: 'rest', needs: ['admin'] }, async (t) => {
    await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' });
    const reply = await admin(t).metrics();
    t.check(reply, { http: { status: 200, contentType: 'text/plain' } }, 'GET /metrics');
    t.assert(
      /version=0\.0\.4/.test(reply.headers?.['content-type'] ?? ''),
      `content type ${reply.headers?.['content-type']} is not the Prometheus text format 0.0.4`,
    );
    const text = reply.text ?? '';
    for (const line of [
      '# HELP orders_http_requests_total Total HTTP requests',
      '# TYPE orders_http_requests_total counter',
      '# HELP orders_http_request_duration_seconds Request duration in seconds',
      '# TYPE orders_http_request_duration_seconds histogram',
    ]) {
      t.assert(text.includes(line), `scrape lacks "${line}"`);
    }
    for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) {
      t.assert(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? ([-+0-9.eE]+|NaN|[+-]Inf)$/.test(line), `not an exposition line: ${line}`);
    }
  }),
  flow('admin-listener-is-separate', ['SVC-two-listeners', 'ADMIN-cluster-only'], { api: 'rest', needs: ['admin'] }, async (t) => {
    t.assert(new URL(t.target.adminUrl!).port !== new URL(t.target.baseUrl).port, 'admin and public listeners share a port');
    for (const path of ['/orders', '/auth/login', '/openapi.yaml']) {
      const reply = await admin(t).get(path);
      t.assert(
        reply.status === 404,
        `admin listener answers GET ${path} with ${reply.status}; it carries only health, readiness and metrics`,
      );
    }
  }),
];
