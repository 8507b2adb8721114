/**
 * npm run test:operations [-- vitest args]: the operators' pack. `promtool check rules` and `promtool test
 * rules` on deploy/prometheus (the rules' unit tests), `promtool check config` on the example scrape
 * configuration, then test/operations (its own vitest config): every Grafana panel query and every rule
 * on a real Prometheus scraping running services. Needs Debian's `prometheus` package (promtool and
 * prometheus) and POSTGRES_DSN, REDIS_ADDR, NATS_URL; says what is missing and exits 1 without them.
 */
import { spawnSync } from 'node:child_process';
import { runCommand } from './run-command.ts';

const missing = ['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL'].filter((name) => !process.env[name]);
if (missing.length > 0) {
  console.error(`test:operations: set ${missing.join(', ')} (docs/real-backends.md)`);
  process.exit(1);
}
const promtool = process.env['PROMTOOL_PATH'] ?? 'promtool';
if (spawnSync(promtool, ['--version'], { stdio: 'ignore' }).status !== 0) {
  console.error('test:operations: promtool not found (Debian: apt-get install prometheus; or PROMTOOL_PATH)');
  process.exit(1);
}
for (const args of [
  ['check', 'rules', 'deploy/prometheus/alerts.yml'],
  ['test', 'rules', 'deploy/prometheus/alerts.test.yml'],
  ['check', 'config', 'deploy/prometheus/prometheus.yml'],
]) {
  console.log(`test:operations: promtool ${args.join(' ')}`);
  const code = await runCommand(promtool, args);
  if (code !== 0) process.exit(code);
}
process.exit(await runCommand('npx', ['vitest', 'run', '--config', 'test/operations/vitest.config.ts', ...process.argv.slice(2)]));
