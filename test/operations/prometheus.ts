import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../support/ports.ts';

/** Debian's prometheus (package `prometheus`; .ci/run installs it), or PROMETHEUS_PATH. */
export const PROMETHEUS = process.env['PROMETHEUS_PATH'] ?? 'prometheus';

export function prometheusVersion(): string | undefined {
  const run = spawnSync(PROMETHEUS, ['--version'], { encoding: 'utf8' });
  return run.status === 0 ? (run.stdout || run.stderr).split('\n')[0] : undefined;
}

export interface Prometheus {
  readonly url: string;
  /** An instant query's result vector (rejects on a query error). */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** The loaded rule groups' rules, with their evaluation health. */
  rules(): Promise<{ name: string; health: string; lastError?: string }[]>;
  stop(): Promise<void>;
}

/**
 * A real Prometheus on loopback with a temporary configuration and data directory: scrapes `targets`
 * (admin listeners, job `orders`) every second and evaluates `ruleFiles` every second.
 */
export async function startPrometheus(targets: readonly string[], ruleFiles: readonly string[]): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'orders-prometheus-'));
  const port = await freePort();
  const config = [
    'global: { scrape_interval: 1s, evaluation_interval: 1s }',
    `rule_files: [${ruleFiles.map((f) => JSON.stringify(f)).join(', ')}]`,
    'scrape_configs:',
    '  - job_name: orders',
    `    static_configs: [{ targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}] }]`,
  ].join('\n');
  writeFileSync(join(dir, 'prometheus.yml'), `${config}\n`);
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const deadline = Date.now() + 60_000;
  while (
    (await fetch(`${url}/-/ready`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (exited || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`prometheus did not become ready: ${log.slice(-1000)}`);
    }
    await sleep(100);
  }
  const api = async <T>(path: string): Promise<T> => {
    const body = (await (await fetch(`${url}${path}`)).json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? body.status}`);
    return body.data;
  };
  return {
    url,
    query: async (expr) =>
      (
        await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
          `/api/v1/query?query=${encodeURIComponent(expr)}`,
        )
      ).result,
    rules: async () =>
      (await api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>('/api/v1/rules')).groups.flatMap(
        (g) => g.rules,
      ),
    async stop() {
      if (!exited) child.kill('SIGTERM');
      await gone;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
