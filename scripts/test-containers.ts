/**
 * npm run test:containers [-- vitest args]: starts PostgreSQL, Redis and NATS in containers, runs the
 * real-backend suite (vitest project `real`, docs/testing.md: what `npm run test:real` runs) against them,
 * then removes the containers. With vitest args, runs exactly those. Exits 1 without running anything
 * when no Docker engine answers.
 */
import { requireDockerAndBaseImages } from '../test/containers/docker-engine.ts';
import { startContainerBackends } from '../test/containers/container-backends.ts';
import { runCommand } from './run-command.ts';

/** The real-backend suite: the `real`, `browser` and `real-alone` projects of vitest.config.ts (npm run test:real). */
const REAL_SUITE = ['--project', 'real', '--project', 'browser', '--project', 'real-alone'];

await requireDockerAndBaseImages('test:containers');

const backends = await startContainerBackends();
let stopping = false;
const stopOnSignal = (): void => {
  if (stopping) return;
  stopping = true;
  void backends.stop().finally(() => process.exit(130));
};
process.once('SIGINT', stopOnSignal);
process.once('SIGTERM', stopOnSignal);

let code: number;
try {
  console.log(`test:containers: REDIS_ADDR=${backends.REDIS_ADDR} NATS_URL=${backends.NATS_URL} (PostgreSQL on trust auth)`);
  code = await runCommand('npx', ['vitest', 'run', ...(process.argv.length > 2 ? process.argv.slice(2) : REAL_SUITE)], {
    env: { ...process.env, POSTGRES_DSN: backends.POSTGRES_DSN, REDIS_ADDR: backends.REDIS_ADDR, NATS_URL: backends.NATS_URL },
  });
} finally {
  if (!stopping) await backends.stop();
}
process.exit(code);
