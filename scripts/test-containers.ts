/**
 * npm run test:containers [-- vitest args]: starts PostgreSQL, Redis and NATS in containers, runs the
 * whole vitest suite against them (the real-backend suites un-skip because the variables are set),
 * then removes the containers. Exits 1 without running anything when no Docker engine answers.
 */
import { spawn } from 'node:child_process';
import { getContainerRuntimeClient } from 'testcontainers';
import { startContainerBackends } from '../test/containers/container-backends.ts';

async function dockerAnswers(): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), 15_000);
  });
  try {
    return await Promise.race([getContainerRuntimeClient().then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function runVitest(env: NodeJS.ProcessEnv, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['vitest', 'run', ...args], { stdio: 'inherit', env });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

if (!(await dockerAnswers())) {
  console.error('test:containers: no Docker engine here; nothing was run');
  process.exit(1);
}

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
  code = await runVitest(
    { ...process.env, POSTGRES_DSN: backends.POSTGRES_DSN, REDIS_ADDR: backends.REDIS_ADDR, NATS_URL: backends.NATS_URL },
    process.argv.slice(2),
  );
} finally {
  if (!stopping) await backends.stop();
}
process.exit(code);
