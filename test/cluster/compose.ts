import { spawnSync } from 'node:child_process';

/**
 * docker-compose.cluster.yml driven from tests and scripts, with Debian's `docker-compose` 1.29 or
 * compose v2 (`docker compose`), whichever is installed (COMPOSE="docker-compose" or COMPOSE="docker
 * compose" to choose). The stack's fixed addresses are the file's: the host reaches every container on
 * the bridge network directly, so clients keep their own source address through haproxy.
 */
export const COMPOSE_FILE = 'docker-compose.cluster.yml';
export const COMPOSE_SUBNET_PREFIX = '172.30.70';
export const COMPOSE_ADDRESSES = {
  balancer: `${COMPOSE_SUBNET_PREFIX}.10`,
  postgres: `${COMPOSE_SUBNET_PREFIX}.5`,
  nats: `${COMPOSE_SUBNET_PREFIX}.7`,
  replicas: { orders1: `${COMPOSE_SUBNET_PREFIX}.11`, orders2: `${COMPOSE_SUBNET_PREFIX}.12`, orders3: `${COMPOSE_SUBNET_PREFIX}.13` },
} as const;
export const COMPOSE_REPLICAS = Object.keys(COMPOSE_ADDRESSES.replicas) as (keyof typeof COMPOSE_ADDRESSES.replicas)[];

export interface ComposeRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Compose {
  /** What runs it: `docker-compose 1.29.2`, `docker compose v2.x`. */
  readonly version: string;
  run(args: readonly string[], input?: string): ComposeRun;
  /** As run(), but throws with the tail of its output when it fails. */
  must(args: readonly string[], input?: string): string;
  /** One service's JSON log lines (stdout); compose prefixes each line with the container's name. */
  logLines(service: string): Record<string, unknown>[];
  /** The Docker id of a service's container. */
  containerId(service: string): string;
}

function composeCommand(): string[] {
  const chosen = process.env['COMPOSE'];
  if (chosen !== undefined) return chosen.split(' ');
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose'];
  throw new Error('neither `docker compose` (v2) nor `docker-compose` (1.29, Debian: apt-get install docker-compose) is installed');
}

export function compose(project: string, env: NodeJS.ProcessEnv): Compose {
  const [bin = 'docker-compose', ...prefix] = composeCommand();
  const run = (args: readonly string[], input?: string): ComposeRun => {
    const done = spawnSync(bin, [...prefix, '-f', COMPOSE_FILE, '-p', project, ...args], {
      env,
      input,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: done.status ?? 1, stdout: done.stdout ?? '', stderr: done.stderr ?? '' };
  };
  const must = (args: readonly string[], input?: string): string => {
    const done = run(args, input);
    if (done.status !== 0)
      throw new Error(`compose ${args.join(' ')}: exit ${done.status}\n${done.stdout.slice(-2000)}\n${done.stderr.slice(-2000)}`);
    return done.stdout;
  };
  const version = `${[bin, ...prefix].join(' ')} ${spawnSync(bin, [...prefix, 'version', '--short'], { encoding: 'utf8' }).stdout?.trim() ?? ''}`;
  return {
    version,
    run,
    must,
    logLines: (service) =>
      must(['logs', '--no-color', service])
        .split('\n')
        .map((line) => line.slice(line.indexOf('{')))
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    containerId: (service) => must(['ps', '-q', service]).trim(),
  };
}
