import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/support/ports.ts';
import { spawnBin } from '../test/support/spawn-bin.ts';

/**
 * Wall time from spawning `node bin/orders-stdlib.ts [--embedded]` to the first 200 from the admin
 * listener's /readyz, polled every 5 ms (spec 3.3: ready once every component is initialised and the
 * port is bound). Includes Node's own start and type stripping of every source file: what an operator
 * waits for. `env`: the real backends' variables (not embedded).
 */
export async function measureStartup(env: Record<string, string> | undefined, timeoutMs = 30_000): Promise<{ readyMs?: number; error?: string }> {
  const [apiPort, adminPort] = [await freePort(), await freePort()];
  const ports = { HTTP_ADDR: `127.0.0.1:${apiPort}`, ADMIN_ADDR: `127.0.0.1:${adminPort}`, LOG_LEVEL: 'error' };
  const started = performance.now();
  const bin = env === undefined ? spawnBin('bin/orders-stdlib.ts', ['--embedded'], ports) : spawnBin('bin/orders-stdlib.ts', [], { ...ports, JWT_SECRET: randomBytes(32).toString('base64url'), ...env });
  let exited = false;
  void bin.exited.then(() => (exited = true));
  try {
    while (performance.now() - started < timeoutMs) {
      if (exited) return { error: `exited before ready: ${bin.stderr().trim().slice(-300)}` };
      const status = await fetch(`http://127.0.0.1:${adminPort}/readyz`, { signal: AbortSignal.timeout(1_000) }).then(async (r) => (await r.arrayBuffer(), r.status), () => 0);
      if (status === 200) return { readyMs: performance.now() - started };
      await sleep(5);
    }
    return { error: `not ready within ${timeoutMs} ms` };
  } finally {
    const timer = setTimeout(() => bin.kill(), 10_000);
    await bin.stop();
    clearTimeout(timer);
  }
}
