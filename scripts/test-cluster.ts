/**
 * npm run test:cluster [-- vitest args]: three orders-grpc replicas behind haproxy on the machine's real
 * Postgres, Redis and NATS (test/cluster, its own vitest config; docs/scale-out.md). Fails at once, with
 * what is missing, when haproxy (Debian: apt-get install haproxy) or a backend variable is absent.
 */
import { haproxyVersion } from '../test/cluster/haproxy.ts';
import { runCommand } from './run-command.ts';

const missing = ['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL'].filter((name) => !process.env[name]);
if (missing.length > 0) {
  console.error(`test:cluster: set ${missing.join(', ')} (docs/real-backends.md)`);
  process.exit(1);
}
const version = haproxyVersion();
if (version === undefined) {
  console.error('test:cluster: haproxy not found (Debian: apt-get install haproxy; or HAPROXY=/path/to/haproxy)');
  process.exit(1);
}
console.log(`test:cluster: ${version}`);
process.exit(await runCommand('npx', ['vitest', 'run', '--config', 'test/cluster/vitest.config.ts', ...process.argv.slice(2)]));
