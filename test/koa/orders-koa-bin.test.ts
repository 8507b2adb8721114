import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { call, login } from './koa-client.ts';

/** The executable as a user runs it: `node bin/orders-koa.ts --embedded`, stopped with SIGTERM. */
describe('bin/orders-koa.ts --embedded', () => {
  it('serves the walk-through with the demo users and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['bin/orders-koa.ts', '--embedded'], {
      env: { ...process.env, HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(child, 'exit');
    try {
      const lines: Record<string, unknown>[] = [];
      const listening = new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', (text) => {
          const line = JSON.parse(text) as Record<string, unknown>;
          lines.push(line);
          if (line['msg'] === 'api: listening') resolve(String(line['addr']));
        });
        child.once('exit', (code) => reject(new Error(`orders-koa exited early with ${String(code)}`)));
      });
      const addr = await listening;
      const base = `http://${addr}`;

      const token = await login(base, 'alice', 'alice-password');
      const created = await call(base, 'POST', '/orders', { token, body: JSON.stringify({ item: 'tea', quantity: 3 }) });
      expect(created).toMatchObject({ status: 201, body: { item: 'tea', quantity: 3, status: 'pending' } });
      const id = (created.body as { id: string }).id;
      expect(await call(base, 'GET', `/orders/${id}`, { token })).toMatchObject({ status: 200, body: { id } });
      expect(await call(base, 'GET', '/orders', { token })).toMatchObject({ status: 200, body: { orders: [{ id }] } });
      expect(await call(base, 'GET', '/me/recent', { token })).toEqual(expect.objectContaining({ status: 200, body: { recent: [id] } }));

      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
      expect(lines.some((l) => l['msg'] === 'stopped')).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
