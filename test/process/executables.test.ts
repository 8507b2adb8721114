// What conformance's per-transport process cases do not already check of runMain: through the bin, SIGINT
// and the shutdown flush of a session, and the embedded banner; in this process (runMainInProcess), bad
// arguments (exit 2) and a port in use at LOG_LEVEL=error (exit 1). (A short JWT_SECRET:
// src/config/service.test.ts, and conformance's main-missing-variable-….)
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runMainInProcess } from '../support/main-in-process.ts';
import { spawnBin, type SpawnedBin } from '../support/spawn-bin.ts';
import { listenLocal } from '../support/ports.ts';
import { transportNamed } from '../support/transports.ts';

const BIN = 'bin/orders-stdlib.ts';
const JWT_SECRET = 'process-test-secret-0123456789-abcdefghijklmnop';
const spawned: SpawnedBin[] = [];
afterEach(() => spawned.splice(0).forEach((bin) => bin.kill()));

function start(args: string[], env: Record<string, string>): SpawnedBin {
  const bin = spawnBin(BIN, args, env);
  spawned.push(bin);
  return bin;
}

async function json(port: number, method: string, path: string, token?: string, body?: unknown): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
  };
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status, path).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

describe('runMain through bin/orders-stdlib.ts (spec 3.4, 4.5, 8.1)', () => {
  it('--embedded: prints the demo logins; SIGINT flushes the session, logs `stopped`, exits 0; no secret in the output', async () => {
    const bin = start(['--embedded'], { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0' });
    const listening = await bin.waitForLine((l) => l['msg'] === 'api: listening', 'api: listening');
    const port = Number(String(listening['addr']).split(':').at(-1));
    const banner = await bin.waitForLine((l) => String(l['msg']).startsWith('embedded mode: in-memory backends'), 'banner');
    expect(banner['msg']).toContain('alice / alice-password');
    expect(bin.lines.find((l) => String(l['msg']).includes('JWT_SECRET is not set'))?.['level']).toBe('warn');
    const token = String((await json(port, 'POST', '/auth/login', undefined, { username: 'alice', password: 'alice-password' }))['token']);
    const orderId = String((await json(port, 'POST', '/orders', token, { item: 'book', quantity: 2 }))['id']);
    await json(port, 'GET', `/orders/${orderId}`, token);
    bin.child.kill('SIGINT');
    expect(await bin.exited).toEqual({ code: 0, signal: null });
    expect(bin.lines.find((l) => l['msg'] === 'shutting down')).toMatchObject({ signal: 'SIGINT' });
    // Shutdown flush (spec 3.2): the lingering session is closed with its state, before `stopped`.
    expect(bin.lines.find((l) => l['msg'] === 'session: closed')).toMatchObject({ views: 1, recent: [orderId] });
    const msgs = bin.lines.map((l) => l['msg']);
    expect(msgs.indexOf('session: closed')).toBeLessThan(msgs.indexOf('stopped'));
    expect(msgs.at(-1)).toBe('stopped');
    const outsideBanner = (bin.stdout() + bin.stderr()).split('\n').filter((t) => !t.includes('embedded mode: in-memory'));
    expect(outsideBanner.filter((t) => t.includes(token) || t.includes('alice-password'))).toEqual([]);
  });
});

describe('runMain of orders-stdlib in this process (spec 3.4, 4.5)', () => {
  // In this process rather than spawned (a node start, ~0.3 s of CPU): the bin only hands its argv to runMain.
  it('an unknown argument: exit 2 with the usage on stderr and nothing on stdout', async () => {
    const run = runMainInProcess(transportNamed('stdlib'), ['--bogus'], { JWT_SECRET });
    expect(await run.code).toBe(2);
    expect(run.output()).toContain('usage: orders-stdlib [--embedded]');
    expect(run.lines).toEqual([]);
  });

  it('HTTP_ADDR in use at LOG_LEVEL=error: exit 1, only error lines, the last `start-up failed` with `api: listen:`', async () => {
    const blocker = createServer();
    const port = await listenLocal(blocker);
    try {
      const run = runMainInProcess(transportNamed('stdlib'), ['--embedded'], {
        JWT_SECRET,
        HTTP_ADDR: `127.0.0.1:${port}`,
        ADMIN_ADDR: '127.0.0.1:0',
        LOG_LEVEL: 'error',
      });
      expect(await run.code).toBe(1);
      expect(run.lines.length).toBeGreaterThan(0);
      expect(run.lines.every((l) => l['level'] === 'error')).toBe(true);
      expect(run.lines.at(-1)).toMatchObject({ msg: 'start-up failed', err: expect.stringMatching(/^api: listen: /) });
      expect(run.output()).not.toContain(JWT_SECRET);
    } finally {
      blocker.close();
    }
  });
});
