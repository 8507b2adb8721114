import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { connect as netConnect, createServer as createNetServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Env } from '../../src/config/env.ts';
import { loadServiceConfig } from '../../src/config/service.ts';
import { createApp } from '../../src/composition/create-app.ts';
import { createEmbeddedBackends } from '../../embedded/backends.ts';
import type { Component } from '../../src/lifecycle/component.ts';
import { runComponents } from '../../src/lifecycle/runner.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { startInProcess, type InProcessApp } from '../../test/support/in-process-app.ts';
import { processCase, type Case, type ProcessContext } from '../case-model.ts';
import { runMainInProcess } from '../../test/support/main-in-process.ts';
import { exitWithin, HANG_GUARD_MS, spawnBin, type SpawnedBin } from '../../test/support/spawn-bin.ts';
import type { Transport } from '../../test/support/transports.ts';
import type { PlatformTimeouts } from '../../src/transports/http/server/timeouts.ts';
import { freePort, listenLocal, waitForPort } from '../../test/support/ports.ts';

/**
 * Checks that need the process itself, once per transport: its executable (spawned), its
 * composition root (createApp + the lifecycle runner) and its listeners.
 */

const SECRET = randomBytes(32).toString('base64url');
/** Timeouts Node enforces, set short in composition (src/transports/http/server/timeouts.ts). */
const SHORT_TIMEOUTS = { keepAliveMs: 300, sniffMs: 500 } as const;

/** The transport's app in process, stopped once `body` is done; returns the app (its logs stay readable). */
async function withApp(
  p: ProcessContext,
  env: Env | undefined,
  body: (app: InProcessApp) => Promise<void>,
  platformTimeouts?: PlatformTimeouts,
): Promise<InProcessApp> {
  const app = await startInProcess({ transport: p.transport.factory, env, platformTimeouts });
  try {
    await body(app);
  } finally {
    await app.stop();
  }
  return app;
}

/** The executable's own start-up failure because its public port was taken (`api: listen: …`). */
const lostItsPort = (lines: readonly Record<string, unknown>[]): boolean =>
  lines.some((l) => String(l['msg']).startsWith('start-up failed') && String(l['err']).startsWith('api: listen:'));

/** Resolves once the process's stdout has ended, so its last lines are parsed. */
const outputEnded = (bin: SpawnedBin): Promise<unknown> =>
  bin.child.stdout!.readableEnded ? Promise.resolve() : once(bin.child.stdout!, 'end');

/**
 * The transport's executable, spawned --embedded at LOG_LEVEL=info: once it logs `api: listening` (after
 * its signal handlers are installed) it must serve GET /openapi.yaml on that port; then SIGTERM. Returns
 * its exit and its log lines.
 */
async function serveThenStop(
  p: ProcessContext,
): Promise<{ exit: Awaited<ReturnType<typeof exitWithin>>; lines: Record<string, unknown>[] }> {
  const bin = spawnBin(p.transport.bin, ['--embedded'], { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'info' });
  try {
    const listening = await bin.waitForLine((line) => line['msg'] === 'api: listening', 'api: listening');
    const status = await fetch(`http://${String(listening['addr'])}/openapi.yaml`).then(
      (r) => r.status,
      () => 0,
    );
    p.assert(status === 200, `${p.transport.bin} does not serve GET /openapi.yaml on its public port (${status})`);
    bin.child.kill('SIGTERM');
    const exit = await exitWithin(bin, HANG_GUARD_MS, `${p.transport.bin} after SIGTERM`);
    await outputEnded(bin);
    return { exit, lines: bin.lines };
  } finally {
    bin.kill();
  }
}

/**
 * The executable's main (runMainInProcess) --embedded at this LOG_LEVEL, on a port chosen here (at warn
 * the `api: listening` line that names it is not logged): it must serve GET /openapi.yaml; then a stop
 * signal. Returns its exit code and its log lines. The port is free when chosen, but another process may
 * bind it first: a main that lost its port (`api: listen: …`) runs again on another.
 */
async function mainAtLevel(p: ProcessContext, level: string): Promise<{ code: number; lines: Record<string, unknown>[] }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const run = runMainInProcess(p.transport, ['--embedded'], {
      HTTP_ADDR: `127.0.0.1:${port}`,
      ADMIN_ADDR: '127.0.0.1:0',
      LOG_LEVEL: level,
    });
    const ended = await Promise.race([run.code.then(() => true), waitForPort(port).then(() => false)]);
    if (ended) {
      p.assert(attempt < 3 && lostItsPort(run.lines), `main with LOG_LEVEL=${level} did not come up: ${run.output().slice(-400)}`);
      continue;
    }
    const status = await fetch(`http://127.0.0.1:${port}/openapi.yaml`).then(
      (r) => r.status,
      () => 0,
    );
    run.signal('SIGTERM');
    const code = await run.code;
    // The port answered for another process while this main failed to bind it.
    if (attempt < 3 && lostItsPort(run.lines)) continue;
    p.assert(status === 200, `main with LOG_LEVEL=${level} does not serve GET /openapi.yaml on its public port`);
    return { code, lines: run.lines };
  }
}

/** Builds the composition root without running it, on fakes, with captured logs. */
async function buildApp(transport: Transport) {
  const logs = new LogCapture();
  const logger = createLogger('debug', logs);
  const config = loadServiceConfig({ HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', JWT_SECRET: SECRET }, { embedded: true });
  const backends = await createEmbeddedBackends(logger, { seedDemoUsers: false });
  const app = createApp({ config, logger, backends, transport: transport.factory, serviceName: `orders-${transport.name}` });
  return { app, logs, logger };
}

export const PROCESS_TRANSPORT_CASES: Case[] = [
  // The executable itself, spawned: bin/<transport>.ts runs main, a real SIGTERM reaches its handlers,
  // its exit code is main's. The cases after it run main in this process (runMainInProcess).
  processCase('executable-serves-then-stops-on-sigterm', ['SVC-executables', 'LIFE-4-shutdown', 'LOG-json'], {}, async (p) => {
    const { exit, lines } = await serveThenStop(p);
    p.assert(exit.code === 0, `${p.transport.bin} exited with ${exit.code ?? exit.signal} after SIGTERM, expected 0`);
    const msgs = lines.map((l) => l['msg']);
    p.assert(
      msgs.includes('shutting down') && msgs.at(-1) === 'stopped',
      `shutdown log lines are ${JSON.stringify(msgs.slice(-4))}, expected shutting down … stopped`,
    );
    for (const line of lines) {
      p.assert(
        typeof line['time'] === 'string' &&
          typeof line['level'] === 'string' &&
          typeof line['msg'] === 'string' &&
          line['msg'] !== '<not json>',
        `stdout line is not a JSON log line with time, level, msg: ${JSON.stringify(line)}`,
      );
    }
    p.assert(
      !lines.some((l) => l['msg'] === 'lifecycle: run failed' || l['msg'] === 'lifecycle: stop failed'),
      'a component failed during shutdown',
    );
  }),
  // Start-up fails before any listener: without JWT_SECRET, and with every backend unreachable.
  ...(
    [
      [
        'main-missing-variable-fails-before-listening',
        ['LIFE-3-missing-env', 'CONFIG-required', 'CONFIG-no-secret-echo'],
        {},
        'without JWT_SECRET',
        'JWT_SECRET',
      ],
      [
        'main-unreachable-backends-abort-start-up',
        ['LIFE-2-init-connect', 'CONFIG-no-secret-echo'],
        { JWT_SECRET: SECRET },
        'with unreachable backends',
        undefined,
      ],
    ] as const
  ).map(([name, rules, extra, when, named]): Case =>
    processCase(name, rules, {}, async (p) => {
      const env = {
        HTTP_ADDR: '127.0.0.1:0',
        ADMIN_ADDR: '127.0.0.1:0',
        POSTGRES_DSN: 'postgres://postgres:pw-hunter2@127.0.0.1:1/test',
        REDIS_ADDR: '127.0.0.1:1',
        NATS_URL: 'nats://127.0.0.1:1',
        ...extra,
      };
      const run = runMainInProcess(p.transport, [], env);
      const code = await run.code;
      p.assert(code !== 0, `main ${when} returned 0`);
      const failure = run.lines.find((l) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith('start-up failed'));
      p.assert(
        failure !== undefined && (named === undefined || String(failure['err']).includes(named)),
        `no start-up failure${named === undefined ? '' : ` naming ${named}`}: ${run.output().slice(-400)}`,
      );
      p.assert(!run.lines.some((l) => l['msg'] === 'api: listening'), 'a listener was served although start-up failed');
      p.assert(!run.output().includes('hunter2'), 'a secret (the DSN password) reached the output');
    }),
  ),
  processCase('main-log-level', ['LOG-level', 'LOG-json'], {}, async (p) => {
    const [{ lines: warn }, { lines: verbose }] = await Promise.all([mainAtLevel(p, 'warn'), mainAtLevel(p, 'verbose')]);
    const levels = (lines: Record<string, unknown>[]) => new Set(lines.map((l) => l['level']));
    p.assert(![...levels(warn)].some((l) => l === 'info' || l === 'debug'), `LOG_LEVEL=warn still logs ${[...levels(warn)].join(', ')}`);
    p.assert(
      warn.some((l) => l['level'] === 'warn'),
      'LOG_LEVEL=warn logged no warning (embedded mode warns about JWT_SECRET)',
    );
    p.assert(
      verbose.some((l) => l['level'] === 'info'),
      'an unknown LOG_LEVEL did not select info',
    );
    p.assert(!verbose.some((l) => l['level'] === 'debug'), 'an unknown LOG_LEVEL selected debug');
    for (const line of [...warn, ...verbose])
      p.assert(
        line['msg'] !== '<not json>' && typeof line['time'] === 'string',
        `stdout line is not a JSON log line: ${JSON.stringify(line)}`,
      );
  }),
  processCase('lifecycle-order-and-shutdown', ['LIFE-1-order', 'LIFE-4-shutdown', 'READY-cancel', 'EVT-4-notifier-stop'], {}, async (p) => {
    const { app, logs, logger } = await buildApp(p.transport);
    const names = app.components.map((c) => c.name);
    const at = (name: string) => names.indexOf(name);
    p.assert(at('tracer') === 0, `components are ${names.join(', ')}: the tracer must come first`);
    for (const backend of ['database', 'cache', 'publisher']) {
      p.assert(
        at(backend) > at('tracer') && at(backend) < at('sessions') && at(backend) < at('notifier') && at(backend) < at('api'),
        `${backend} is not built before the components using it: ${names.join(', ')}`,
      );
    }
    p.assert(at('api') < at('admin'), `components: ${names.join(', ')}`);
    const events: string[] = [];
    let apiListeningAtReturn: boolean | undefined;
    const wrapped: Component[] = app.components.map((c) => ({
      name: c.name,
      ...(c.init ? { init: async () => (events.push(`init ${c.name}`), c.init!()) } : {}),
      ...(c.run
        ? {
            run: async (signal: AbortSignal) => {
              events.push(`run ${c.name}`);
              await c.run!(signal);
              if (c.name === 'api') apiListeningAtReturn = app.api.server().listening;
              events.push(`returned ${c.name}`);
            },
          }
        : {}),
      ...(c.stop ? { stop: async () => (events.push(`stop ${c.name}`), c.stop!()) } : {}),
    }));
    const controller = new AbortController();
    const running = runComponents(wrapped, controller.signal, logger);
    await Promise.all([once(app.api.server(), 'listening'), once(app.admin.server(), 'listening')]);
    controller.abort(); // what SIGTERM does in runMain
    await running;
    const firstStop = events.findIndex((e) => e.startsWith('stop '));
    const lastReturn = events.reduce((last, e, i) => (e.startsWith('returned ') ? i : last), -1);
    const runs = events.filter((e) => e.startsWith('run ')).length;
    p.assert(events.filter((e) => e.startsWith('returned ')).length === runs, `not every Run returned: ${events.join(', ')}`);
    p.assert(lastReturn < firstStop, `Stop began before every Run had returned: ${events.join(', ')}`);
    const stops = events.filter((e) => e.startsWith('stop ')).map((e) => e.slice(5));
    const expected = app.components
      .filter((c) => c.stop)
      .map((c) => c.name)
      .reverse();
    p.assert(
      JSON.stringify(stops) === JSON.stringify(expected),
      `Stop order ${stops.join(', ')}, expected reverse dependency order ${expected.join(', ')}`,
    );
    p.assert(apiListeningAtReturn === true, 'the API Run returned only after its listener was shut down (Run must return without Stop)');
    p.assert(!app.api.server().listening, 'Stop did not shut the API listener down');
    p.assert(events.includes('returned notifier'), 'the notifier Run did not return on cancel');
    p.assert(
      !logs.lines.some((l) => l.msg === 'lifecycle: run failed'),
      `a Run failed on cancel: ${JSON.stringify(logs.find('lifecycle: run failed'))}`,
    );
  }),
  processCase('not-ready-before-bind', ['READY-not-yet'], {}, async (p) => {
    const { app } = await buildApp(p.transport);
    const report = await app.checker.ready();
    p.assert(report.clean === false, 'ready before the port was bound');
    p.assert(
      JSON.stringify(report.nodes) ===
        JSON.stringify([{ name: 'api', status: 'unavailable', error: 'api: not accepting connections yet' }]),
      `readiness before bind is ${JSON.stringify(report.nodes)}`,
    );
  }),
  processCase('bind-failure-is-an-api-listen-error', ['READY-bind-fails'], {}, async (p) => {
    const blocker = createNetServer();
    const port = await listenLocal(blocker);
    try {
      // Undefined when start-up succeeds (the app is stopped again), else what it threw.
      const failure = await startInProcess({ transport: p.transport.factory, env: { HTTP_ADDR: `127.0.0.1:${port}` } }).then(
        (app) => app.stop(),
        (error: unknown) => error,
      );
      const message = failure instanceof Error ? failure.message : String(failure);
      p.assert(failure !== undefined, `start-up succeeded on a port already in use (${port})`);
      p.assert(message.startsWith('api: listen:'), `bind failure text is "${message}", expected it to begin "api: listen:"`);
    } finally {
      blocker.close();
    }
  }),
  processCase('public-listener-has-finite-timeouts', ['LIMIT-timeouts'], {}, async (p) => {
    // Measured, not read: an idle keep-alive connection is closed by the server, and on the one-port
    // listener so is a connection that never says which protocol it speaks. Short values set in
    // composition (the production 5 s and 10 s are waited out by http1-timeouts-enforced-at-production-values
    // in the real-backend suite); the headers and request timeouts are http1-timeouts-enforced-as-declared,
    // the HTTP/2 ones http2-stream-and-idle-deadlines-are-enforced and test/grpc/http2-deadlines.real.test.ts.
    await withApp(
      p,
      undefined,
      async (app) => {
        const declared = app.app.transport.timeouts;
        const closedWithin = (payload: string | undefined, boundMs: number): Promise<{ closed: boolean; afterMs: number; reply: string }> =>
          new Promise((resolve) => {
            const socket = netConnect(app.port, '127.0.0.1');
            let reply = '';
            let sentAt = Date.now();
            socket.on('data', (chunk: Buffer) => (reply += chunk.toString('latin1')));
            socket.on('error', () => undefined);
            socket.once('connect', () => {
              sentAt = Date.now();
              if (payload !== undefined) socket.write(payload);
            });
            const bound = setTimeout(() => {
              socket.destroy();
              resolve({ closed: false, afterMs: Date.now() - sentAt, reply });
            }, boundMs);
            socket.once('close', () => {
              clearTimeout(bound);
              resolve({ closed: true, afterMs: Date.now() - sentAt, reply });
            });
          });
        // Bounds against a hang only: a connection left open is what the case refutes, however late its close.
        const keepAlive = closedWithin('GET /openapi.yaml HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', HANG_GUARD_MS);
        const silent = p.transport.name === 'grpc' ? closedWithin(undefined, HANG_GUARD_MS) : undefined;
        const idle = await keepAlive;
        p.assert(idle.reply.startsWith('HTTP/1.1 200'), `keep-alive probe: ${idle.reply.slice(0, 40)}`);
        p.assert(idle.closed, `an idle keep-alive connection was never closed (declared ${JSON.stringify(declared)})`);
        p.assert(
          idle.afterMs >= SHORT_TIMEOUTS.keepAliveMs,
          `the idle keep-alive connection was closed after ${idle.afterMs} ms, before its ${SHORT_TIMEOUTS.keepAliveMs} ms`,
        );
        if (silent !== undefined) {
          const quiet = await silent;
          p.assert(quiet.closed, 'a connection that sent nothing was never closed on the one-port listener');
          p.assert(
            quiet.afterMs >= SHORT_TIMEOUTS.sniffMs - 50,
            `the silent connection was closed after ${quiet.afterMs} ms, before its ${SHORT_TIMEOUTS.sniffMs} ms`,
          );
        }
      },
      SHORT_TIMEOUTS,
    );
  }),
  processCase('spans-exported-over-otlp-http-in-batches', ['TRACE-otlp-export', 'LIFE-5-tracer-flush'], {}, async (p) => {
    const received: { method: string; url: string; type: string }[] = [];
    const collector = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', type: String(req.headers['content-type']) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    const port = await listenLocal(collector);
    try {
      // withApp stops the app before it returns: the tracer's Stop flushes the batch.
      await withApp(p, { OTLP_ENDPOINT: `127.0.0.1:${port}` }, async (app) => {
        const status = (await fetch(`${app.baseUrl}/openapi.yaml`)).status;
        p.assert(status === 200, `GET /openapi.yaml answered ${status}`);
        await sleep(50);
        p.assert(received.length === 0, 'a span was exported at once rather than in a batch');
      });
      p.assert(
        received.some((r) => r.method === 'POST' && r.url === '/v1/traces'),
        `nothing exported to http://127.0.0.1:${port}/v1/traces: ${JSON.stringify(received)}`,
      );
    } finally {
      collector.close();
    }
  }),
  processCase('unreachable-otlp-endpoint-does-not-fail-start-up', ['TRACE-no-connect'], {}, async (p) => {
    const app = await withApp(p, { OTLP_ENDPOINT: '127.0.0.1:1' }, async (app) => {
      p.assert((await fetch(`${app.baseUrl}/openapi.yaml`)).status === 200, 'requests fail with an unreachable OTLP endpoint');
    });
    p.assert(
      !app.logs.lines.some((l) => l.msg === 'lifecycle: run failed' || l.msg === 'start-up failed'),
      'the unreachable endpoint failed the lifecycle',
    );
  }),
  processCase('replicas-hold-separate-sessions', ['SESSION-per-process'], {}, async (p) => {
    const env = { JWT_SECRET: SECRET };
    const [one, two] = await Promise.all([
      startInProcess({ transport: p.transport.factory, env }),
      startInProcess({ transport: p.transport.factory, env }),
    ]);
    try {
      // The same JWT_SECRET: replica two accepts the token replica one issued, as behind a load balancer.
      const auth = { authorization: `Bearer ${await one.login(`replica-${randomUUID()}`)}`, 'content-type': 'application/json' };
      const created = await fetch(`${one.baseUrl}/orders`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ item: 'x', quantity: 1 }),
      });
      const id = ((await created.json()) as { id: string }).id;
      p.assert((await fetch(`${one.baseUrl}/orders/${id}`, { headers: auth })).status === 200, 'fetch on replica one failed');
      const recentOne = (await (await fetch(`${one.baseUrl}/me/recent`, { headers: auth })).json()) as { recent: string[] };
      const recentTwo = (await (await fetch(`${two.baseUrl}/me/recent`, { headers: auth })).json()) as { recent: string[] };
      p.assert(JSON.stringify(recentOne.recent) === JSON.stringify([id]), `replica one recent is ${JSON.stringify(recentOne.recent)}`);
      p.assert(JSON.stringify(recentTwo.recent) === '[]', `replica two shares replica one's session: ${JSON.stringify(recentTwo.recent)}`);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  }),
];
