import { randomBytes } from 'node:crypto';
import { freePort } from '../test/support/ports.ts';
import { spawnBin } from '../test/support/spawn-bin.ts';

/**
 * Wall time from spawning `node bin/orders-stdlib.ts [--embedded]` to the first 200 from the admin
 * listener's /readyz (spec 3.3: ready once every component is initialised and the port is bound),
 * polled by spawnBin's waitReady every 25 ms (the figure's resolution). Includes Node's own start and
 * type stripping of every source file: what an operator waits for. `env`: the real backends' variables
 * (not embedded).
 */
export async function measureStartup(
  env: Record<string, string> | undefined,
  timeoutMs = 30_000,
): Promise<{ readyMs?: number; error?: string }> {
  const [apiPort, adminPort] = [await freePort(), await freePort()];
  const ports = { HTTP_ADDR: `127.0.0.1:${apiPort}`, ADMIN_ADDR: `127.0.0.1:${adminPort}`, LOG_LEVEL: 'error' };
  const started = performance.now();
  const bin =
    env === undefined
      ? spawnBin('bin/orders-stdlib.ts', ['--embedded'], ports)
      : spawnBin('bin/orders-stdlib.ts', [], { ...ports, JWT_SECRET: randomBytes(32).toString('base64url'), ...env });
  try {
    await bin.waitReady(`http://127.0.0.1:${adminPort}`, timeoutMs);
    return { readyMs: performance.now() - started };
  } catch (error) {
    return { error: error instanceof Error ? error.message.slice(-300) : String(error) };
  } finally {
    const timer = setTimeout(() => bin.kill(), 10_000);
    await bin.stop();
    clearTimeout(timer);
  }
}
