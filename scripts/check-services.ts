/**
 * CI preflight: when POSTGRES_DSN, REDIS_ADDR and NATS_URL are set, each server must answer, or the run
 * fails here with one clear line instead of as a hundred failing suites. Uses the adapters' own config
 * parsing, so a malformed value fails the same way the service would. bench/real-env.ts asks the same.
 */
import { Socket } from 'node:net';
import { natsConfigFromEnv } from '../src/adapters/nats/config.ts';
import { describeDsn } from '../src/adapters/postgres/config.ts';
import { redisConfigFromEnv } from '../src/adapters/redis/connection.ts';

export function reachable(host: string, port: number, timeoutMs = 3_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

/** Where each configured backend variable points. */
export function backendTargets(env: NodeJS.ProcessEnv): { name: string; host: string; port: number; shown: string }[] {
  const targets: { name: string; host: string; port: number; shown: string }[] = [];
  if (env['POSTGRES_DSN']) {
    const url = new URL(env['POSTGRES_DSN']);
    targets.push({
      name: 'POSTGRES_DSN',
      host: url.hostname || '127.0.0.1',
      port: Number(url.port || 5432),
      shown: describeDsn(env['POSTGRES_DSN']),
    });
  }
  if (env['REDIS_ADDR']) {
    const redis = redisConfigFromEnv(env);
    targets.push({ name: 'REDIS_ADDR', host: redis.host, port: redis.port, shown: `${redis.host}:${redis.port}` });
  }
  if (env['NATS_URL']) {
    const nats = natsConfigFromEnv(env);
    const url = new URL(nats.servers[0] as string);
    targets.push({ name: 'NATS_URL', host: url.hostname, port: Number(url.port || 4222), shown: nats.display });
  }
  return targets;
}

if (import.meta.main) {
  const targets = backendTargets(process.env);
  if (targets.length === 0) {
    console.log('check-services: POSTGRES_DSN, REDIS_ADDR and NATS_URL are unset; the real-backend suites will be skipped');
    process.exit(0);
  }
  let failed = false;
  for (const target of targets) {
    const ok = await reachable(target.host, target.port);
    console.log(`check-services: ${target.name} (${target.shown}) ${ok ? 'answers' : 'DOES NOT ANSWER'}`);
    failed ||= !ok;
  }
  if (failed) {
    console.error('check-services: a configured backend is unreachable; start it (see the machine doc) or unset its variable');
    process.exit(1);
  }
}
