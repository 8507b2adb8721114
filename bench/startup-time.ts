import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort } from '../test/support/ports.ts';

export interface StartupResult {
  readonly readyMs: number | undefined;
  readonly error: string | undefined;
}

const POLL_MS = 5;

/**
 * Wall time from spawning `node bin/orders-stdlib.ts [--embedded]` to the first 200 from the admin
 * listener's /readyz (spec 3.3: ready once every component is initialised and the port is bound).
 * Includes Node's own start and type stripping of every source file: what an operator waits for.
 */
export async function measureStartup(root: string, embedded: boolean, extraEnv: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<StartupResult> {
  const [apiPort, adminPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HTTP_ADDR: `127.0.0.1:${apiPort}`,
    ADMIN_ADDR: `127.0.0.1:${adminPort}`,
    LOG_LEVEL: 'error',
    ...(embedded ? {} : { JWT_SECRET: randomBytes(32).toString('base64url') }),
    ...extraEnv,
  };
  const args = [join(root, 'bin/orders-stdlib.ts'), ...(embedded ? ['--embedded'] : [])];
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2_000)));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  try {
    while (performance.now() - started < timeoutMs) {
      if (exited) return { readyMs: undefined, error: `exited before ready: ${stderr.trim().slice(-300)}` };
      try {
        const response = await fetch(`http://127.0.0.1:${adminPort}/readyz`, { signal: AbortSignal.timeout(1_000) });
        await response.arrayBuffer();
        if (response.status === 200) return { readyMs: performance.now() - started, error: undefined };
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return { readyMs: undefined, error: `not ready within ${timeoutMs} ms` };
  } finally {
    if (!exited) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exit;
    clearTimeout(timer);
  }
}
