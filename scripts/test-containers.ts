/**
 * npm run test:containers [-- vitest args]: starts PostgreSQL, Redis and NATS in containers, runs every
 * suite that talks to the backends named by POSTGRES_DSN / REDIS_ADDR / NATS_URL against them (the
 * conformance suite's real column only: its fake columns and the fake-only suites do not touch a backend
 * and already ran in `npm test`), then removes the containers. With vitest args, runs exactly those.
 * Exits 1 without running anything when no Docker engine answers.
 */
import { requireDockerAndBaseImages } from '../test/containers/docker-engine.ts';
import { startContainerBackends } from '../test/containers/container-backends.ts';
import { runCommand } from './run-command.ts';

/** The suites that read the backend variables (grep -l POSTGRES_DSN, REDIS_ADDR, NATS_URL, realBackendsConfigured). */
const BACKEND_SUITES = ['conformance/conformance.test.ts', 'test/contracts', 'test/durability', 'test/faults', 'test/rate-limit', 'test/shutdown', 'test/process'];

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
  code = await runCommand(
    'npx',
    ['vitest', 'run', ...(process.argv.length > 2 ? process.argv.slice(2) : BACKEND_SUITES)],
    { env: { ...process.env, ...(process.argv.length > 2 ? {} : { CONFORMANCE_BACKEND: 'real' }), POSTGRES_DSN: backends.POSTGRES_DSN, REDIS_ADDR: backends.REDIS_ADDR, NATS_URL: backends.NATS_URL } },
  );
} finally {
  if (!stopping) await backends.stop();
}
process.exit(code);
