import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One executable as a user runs it (`node bin/<name>.ts --embedded`, demo users seeded) on port 0. */
export interface EmbeddedService {
  readonly baseUrl: string;
  stop(): Promise<void>;
}

export async function startEmbedded(bin: string): Promise<EmbeddedService> {
  const child: ChildProcess = spawn(process.execPath, [`bin/${bin}.ts`, '--embedded'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const addr = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      if (!text.startsWith('{')) return;
      const line = JSON.parse(text) as { msg?: string; addr?: string };
      if (line.msg === 'api: listening' && line.addr !== undefined) resolve(line.addr);
    });
    child.once('exit', (code) => reject(new Error(`${bin} exited before listening (${String(code)})`)));
  });
  return {
    baseUrl: `http://${addr}`,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
