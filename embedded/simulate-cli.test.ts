// `orders-admin simulate …` in this process: the words parsed into one control API request, ADMIN_ADDR
// turned into the URL dialled, and what is sent to a stub admin listener (node:http, recording each request)
// and printed of its answer. That the simulator does what the requests ask is test/process/simulator.test.ts
// and conformance/cases/simulator.ts.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Readable } from 'node:stream';
import { runAdminCli, USAGE } from '../src/cli/admin-cli.ts';
import type { Env } from '../src/config/env.ts';
import { adminUrl, parseSimulate, runSimulateCli, SIMULATE, SIMULATE_USAGE } from './simulate-cli.ts';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function simulate(args: string[], env: Env): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const code = await runSimulateCli(args, {
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

interface Recorded {
  method: string | undefined;
  url: string | undefined;
  contentType: string | undefined;
  body: string;
}

describe('parseSimulate', () => {
  it('[SIM-embedded-only] the usage lists every verb and where it talks to', () => {
    for (const verb of ['status', 'down|up <component>', 'slow <component> <ms>', 'fail <component> <n>', 'advance <duration>', 'reset'])
      expect(SIMULATE_USAGE).toContain(`  orders-admin simulate ${verb} `);
    expect(SIMULATE_USAGE).toContain('talks to ADMIN_ADDR, default 127.0.0.1:8081)\n');
  });

  it.each([
    [['status'], { method: 'GET', path: '/simulator' }],
    [['reset'], { method: 'POST', path: '/simulator/reset' }],
    [['down', 'database'], { method: 'PUT', path: '/simulator/components/database', body: { state: 'down' } }],
    [['up', 'cache'], { method: 'PUT', path: '/simulator/components/cache', body: { state: 'up' } }],
    [['down', 'publisher'], { method: 'PUT', path: '/simulator/components/publisher', body: { state: 'down' } }],
    [['slow', 'cache', '250'], { method: 'PUT', path: '/simulator/components/cache', body: { latencyMs: 250 } }],
    [['slow', 'publisher', '0'], { method: 'PUT', path: '/simulator/components/publisher', body: { latencyMs: 0 } }],
    [['fail', 'database', '3'], { method: 'PUT', path: '/simulator/components/database', body: { failNext: 3 } }],
    [['fail', 'cache', '007'], { method: 'PUT', path: '/simulator/components/cache', body: { failNext: 7 } }],
    [['advance', '5m'], { method: 'POST', path: '/simulator/clock/advance', body: { ms: 300_000 } }],
    [['advance', '1h30m'], { method: 'POST', path: '/simulator/clock/advance', body: { ms: 5_400_000 } }],
    [['advance', '1.5s'], { method: 'POST', path: '/simulator/clock/advance', body: { ms: 1_500 } }],
  ])('[SIM-component-settings] %j is %j', (args, request) => {
    expect(parseSimulate(args)).toEqual(request);
  });

  it.each([
    [[], 'simulate: missing command'],
    [['explode'], 'unknown arguments: simulate explode'],
    [['status', 'now'], 'unknown arguments: simulate status now'],
    [['reset', 'all'], 'unknown arguments: simulate reset all'],
    [['down'], 'simulate down: expected one of database, cache, publisher'],
    [['up', 'disk'], 'simulate up: expected one of database, cache, publisher'],
    [['down', 'cache', 'now'], 'unknown arguments: simulate down cache now'],
    [['up', 'cache', 'now', 'please'], 'unknown arguments: simulate up cache now please'],
    [['slow', 'cache'], 'simulate slow: expected <database|cache|publisher> <ms>'],
    [['slow', 'disk', '5'], 'simulate slow: expected <database|cache|publisher> <ms>'],
    [['slow', 'cache', '-1'], 'simulate slow: expected <database|cache|publisher> <ms>'],
    [['slow', 'cache', '1.5'], 'simulate slow: expected <database|cache|publisher> <ms>'],
    [['slow', 'cache', '5ms'], 'simulate slow: expected <database|cache|publisher> <ms>'],
    [['fail', 'cache', 'x2'], 'simulate fail: expected <database|cache|publisher> <n>'],
    [['fail'], 'simulate fail: expected <database|cache|publisher> <n>'],
    [['fail', 'cache', '2', '3'], 'unknown arguments: simulate fail cache 2 3'],
    [['advance'], 'unknown arguments: simulate advance'],
    [['advance', '5m', '5m'], 'unknown arguments: simulate advance 5m 5m'],
    [['advance', 'soon'], 'simulate advance: expected a duration such as 5m, 2h or 90s'],
    [['advance', '5'], 'simulate advance: expected a duration such as 5m, 2h or 90s'],
    // Fractions of a millisecond: the control API takes whole ones.
    [['advance', '0.5ms'], 'simulate advance: expected a duration such as 5m, 2h or 90s'],
    [['advance', '0s'], 'simulate advance: expected a duration such as 5m, 2h or 90s'],
  ])('[SIM-embedded-only] %j is refused: %s', (args, problem) => {
    expect(parseSimulate(args)).toBe(problem);
  });
});

describe('orders-admin simulate (bin/orders-admin.ts)', () => {
  async function ordersAdmin(argv: string[]): Promise<Result> {
    let stdout = '';
    let stderr = '';
    const io = {
      env: {},
      stdin: Readable.from([]),
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    };
    const code = await runAdminCli(argv, io, [SIMULATE]);
    return { code, stdout, stderr };
  }

  it('[SIM-embedded-only] the usage lists simulate and ADMIN_ADDR', async () => {
    const { stdout } = await ordersAdmin(['--help']);
    expect(stdout).toContain(`${SIMULATE_USAGE}environment:\n`);
    expect(stdout).toContain("  ADMIN_ADDR       simulate: the service's admin listener (default 127.0.0.1:8081)\nexit codes:");
  });

  it('[SIM-embedded-only] simulate goes to the simulator CLI with the words after it', async () => {
    // A bad simulate command is refused by the simulator's parser, with its own usage.
    expect(await ordersAdmin(['simulate', 'sideways'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `orders-admin: unknown arguments: simulate sideways\nusage:\n${SIMULATE_USAGE}`,
    });
    // `simulate` only as the first word.
    expect((await ordersAdmin(['users', 'simulate'])).stderr).toMatch(/^orders-admin: unknown arguments: users simulate\nusage:/);
    expect(USAGE).not.toContain('simulate');
  });
});

describe('adminUrl', () => {
  it.each([
    [{}, 'http://127.0.0.1:8081'],
    [{ ADMIN_ADDR: '' }, 'http://127.0.0.1:8081'],
    [{ ADMIN_ADDR: ':9000' }, 'http://127.0.0.1:9000'],
    [{ ADMIN_ADDR: '0.0.0.0:9000' }, 'http://127.0.0.1:9000'],
    [{ ADMIN_ADDR: '[::]:9000' }, 'http://[::1]:9000'],
    [{ ADMIN_ADDR: '[::1]:9001' }, 'http://[::1]:9001'],
    [{ ADMIN_ADDR: '[fe80::1]:80' }, 'http://[fe80::1]:80'],
    [{ ADMIN_ADDR: '10.1.2.3:81' }, 'http://10.1.2.3:81'],
    [{ ADMIN_ADDR: 'admin.internal:8081' }, 'http://admin.internal:8081'],
  ] as Array<[Env, string]>)('[CONFIG-defaults] ADMIN_ADDR of %j is dialled as %s', (env, url) => {
    expect(adminUrl(env)).toBe(url);
  });
});

describe('runSimulateCli against a stub admin listener', () => {
  let server: Server;
  let env: Env;
  const requests: Recorded[] = [];
  let answer: { status: number; body: string } = { status: 200, body: '{}' };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        requests.push({
          method: req.method,
          url: req.url,
          contentType: req.headers['content-type'],
          body: Buffer.concat(chunks).toString(),
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    env = { ADMIN_ADDR: `127.0.0.1:${(server.address() as AddressInfo).port}` };
  });

  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  afterEach(() => {
    requests.length = 0;
    answer = { status: 200, body: '{}' };
    vi.restoreAllMocks();
  });

  it('[SIM-embedded-only] status is one GET without a body; the JSON answer goes to stdout, exit 0', async () => {
    answer = { status: 200, body: '{"components":[],"clock":{"offsetMs":0}}' };
    expect(await simulate(['status'], env)).toEqual({ code: 0, stdout: '{"components":[],"clock":{"offsetMs":0}}\n', stderr: '' });
    expect(requests).toEqual([{ method: 'GET', url: '/simulator', contentType: undefined, body: '' }]);
  });

  it.each([
    [['down', 'cache'], 'PUT', '/simulator/components/cache', '{"state":"down"}'],
    [['slow', 'publisher', '40'], 'PUT', '/simulator/components/publisher', '{"latencyMs":40}'],
    [['fail', 'database', '2'], 'PUT', '/simulator/components/database', '{"failNext":2}'],
    [['advance', '90s'], 'POST', '/simulator/clock/advance', '{"ms":90000}'],
  ])('[SIM-component-settings] %j sends %s %s with the JSON body %s', async (args, method, url, body) => {
    answer = { status: 200, body: '{"name":"x"}' };
    expect(await simulate(args, env)).toEqual({ code: 0, stdout: '{"name":"x"}\n', stderr: '' });
    expect(requests).toEqual([{ method, url, contentType: 'application/json', body }]);
  });

  it('[SIM-embedded-only] reset is a POST without a body', async () => {
    expect((await simulate(['reset'], env)).code).toBe(0);
    expect(requests).toEqual([{ method: 'POST', url: '/simulator/reset', contentType: undefined, body: '' }]);
  });

  it('[SIM-embedded-only] a 404 means a service without --embedded: exit 1 saying so', async () => {
    answer = { status: 404, body: '{"error":"not found"}' };
    expect(await simulate(['status'], env)).toEqual({
      code: 1,
      stdout: '',
      stderr: `orders-admin: http://${env['ADMIN_ADDR']} has no simulator: start the service with --embedded\n`,
    });
  });

  it('[ERR-validation] any other refusal is exit 1 with the request, the status and the answer', async () => {
    answer = { status: 400, body: '{"error":"latencyMs must be an integer from 0 to 10000"}' };
    expect(await simulate(['slow', 'cache', '99999'], env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: PUT /simulator/components/cache: 400 {"error":"latencyMs must be an integer from 0 to 10000"}\n',
    });
    answer = { status: 500, body: '' };
    expect(await simulate(['reset'], env)).toEqual({ code: 1, stdout: '', stderr: 'orders-admin: POST /simulator/reset: 500 \n' });
  });

  it('[SIM-embedded-only] bad words are exit 2 with the simulate usage, and nothing is sent', async () => {
    expect(await simulate(['down', 'disk'], env)).toEqual({
      code: 2,
      stdout: '',
      stderr: `orders-admin: simulate down: expected one of database, cache, publisher\nusage:\n${SIMULATE_USAGE}`,
    });
    expect(requests).toEqual([]);
  });

  it('[CONFIG-formats] a malformed ADMIN_ADDR is exit 2 naming it, and nothing is sent', async () => {
    expect(await simulate(['status'], { ADMIN_ADDR: 'localhost' })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'orders-admin: config: ADMIN_ADDR must be host:port or :port\n',
    });
    expect(await simulate(['status'], { ADMIN_ADDR: '127.0.0.1:99999' })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'orders-admin: config: ADMIN_ADDR must be host:port or :port\n',
    });
    expect(requests).toEqual([]);
  });

  it('[SIM-embedded-only] nothing listening: exit 1 naming the URL, ADMIN_ADDR and the cause', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    expect(await simulate(['status'], { ADMIN_ADDR: `127.0.0.1:${port}` })).toEqual({
      code: 1,
      stdout: '',
      stderr: `orders-admin: cannot reach the admin listener at http://127.0.0.1:${port} (ADMIN_ADDR): connect ECONNREFUSED 127.0.0.1:${port}\n`,
    });
  });

  it('[SIM-embedded-only] a failure without a cause is reported by its own message, or as text', async () => {
    const base = `http://${env['ADMIN_ADDR']}`;
    vi.spyOn(globalThis, 'fetch').mockRejectedValueOnce(new Error('socket hang up'));
    expect((await simulate(['status'], env)).stderr).toBe(
      `orders-admin: cannot reach the admin listener at ${base} (ADMIN_ADDR): socket hang up\n`,
    );
    vi.spyOn(globalThis, 'fetch').mockRejectedValueOnce(new Error('fetch failed', { cause: 'not an Error' }));
    expect((await simulate(['status'], env)).stderr).toBe(
      `orders-admin: cannot reach the admin listener at ${base} (ADMIN_ADDR): fetch failed\n`,
    );
    // A rejection that is no object at all.
    vi.spyOn(globalThis, 'fetch').mockRejectedValueOnce(null);
    expect(await simulate(['status'], env)).toEqual({
      code: 1,
      stdout: '',
      stderr: `orders-admin: cannot reach the admin listener at ${base} (ADMIN_ADDR): null\n`,
    });
  });

  it('[ERR-internal] an error that is not about configuration is not swallowed as exit 2', async () => {
    // ADMIN_ADDR read through a getter that throws: only a ConfigError is reported as bad configuration.
    const env = Object.defineProperty({}, 'ADMIN_ADDR', {
      enumerable: true,
      get: () => {
        throw new RangeError('environment unreadable');
      },
    }) as Env;
    await expect(simulate(['status'], env)).rejects.toThrow('environment unreadable');
  });
});
