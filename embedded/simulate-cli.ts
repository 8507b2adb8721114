// `orders-admin simulate …`: the simulator's control API from the command line (rule SIM-embedded-only).
import type { AdminCommand } from '../src/cli/admin-cli.ts';
import { ConfigError, parseDuration, parseListenAddress, type Env } from '../src/config/env.ts';

export const SIMULATE_USAGE = `  orders-admin simulate status                  the simulated components and clock
  orders-admin simulate down|up <component>     take database, cache or publisher down / bring it back
  orders-admin simulate slow <component> <ms>   add latency to each of its operations (0 removes it)
  orders-admin simulate fail <component> <n>    fail its next n request operations
  orders-admin simulate advance <duration>      move the service clock and timers, e.g. 5m, 2h, 90s
  orders-admin simulate reset                   everything up, no latency, real time
                                                (only a service started with --embedded has a simulator;
                                                talks to ADMIN_ADDR, default 127.0.0.1:8081)
`;

interface Request {
  readonly method: 'GET' | 'PUT' | 'POST';
  readonly path: string;
  readonly body?: Readonly<Record<string, unknown>>;
}

const COMPONENTS = ['database', 'cache', 'publisher'];

/** The words after `simulate` as one control API request, or what is wrong with them. */
export function parseSimulate(args: readonly string[]): Request | string {
  const [verb, first, second, ...rest] = args;
  // A word left out is refused as a wrong one is: no undefined check of its own (it could never decide anything).
  const component = (name: string | undefined): string | undefined => COMPONENTS.find((known) => known === name);
  const count = (text: string | undefined): number | undefined => (/^\d+$/.test(text ?? '') ? Number(text) : undefined);
  if (rest.length > 0) return `unknown arguments: simulate ${args.join(' ')}`;
  if ((verb === 'status' || verb === 'reset') && first === undefined) {
    return verb === 'status' ? { method: 'GET', path: '/simulator' } : { method: 'POST', path: '/simulator/reset' };
  }
  if ((verb === 'down' || verb === 'up') && second === undefined) {
    const name = component(first);
    return name === undefined
      ? `simulate ${verb}: expected one of ${COMPONENTS.join(', ')}`
      : { method: 'PUT', path: `/simulator/components/${name}`, body: { state: verb } };
  }
  if (verb === 'slow' || verb === 'fail') {
    const name = component(first);
    const n = count(second);
    if (name === undefined || n === undefined)
      return `simulate ${verb}: expected <${COMPONENTS.join('|')}> <${verb === 'slow' ? 'ms' : 'n'}>`;
    return { method: 'PUT', path: `/simulator/components/${name}`, body: verb === 'slow' ? { latencyMs: n } : { failNext: n } };
  }
  if (verb === 'advance' && first !== undefined && second === undefined) {
    const ms = parseDuration(first);
    // No duration (undefined) is no integer either.
    return Number.isInteger(ms)
      ? { method: 'POST', path: '/simulator/clock/advance', body: { ms } }
      : 'simulate advance: expected a duration such as 5m, 2h or 90s';
  }
  return args.length === 0 ? 'simulate: missing command' : `unknown arguments: simulate ${args.join(' ')}`;
}

/** ADMIN_ADDR as a URL to dial: a wildcard host (`:8081`, 0.0.0.0) means this machine. */
export function adminUrl(env: Env): string {
  const { host, port } = parseListenAddress('ADMIN_ADDR', env['ADMIN_ADDR'] || '127.0.0.1:8081');
  const dial = host === undefined || host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${dial.includes(':') ? `[${dial}]` : dial}:${port}`;
}

export interface SimulateIo {
  readonly env: Env;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** `orders-admin simulate …`: one request to the admin listener, its JSON answer on stdout. */
export async function runSimulateCli(args: readonly string[], io: SimulateIo): Promise<number> {
  const request = parseSimulate(args);
  if (typeof request === 'string') {
    io.stderr.write(`orders-admin: ${request}\nusage:\n${SIMULATE_USAGE}`);
    return 2;
  }
  let base: string;
  try {
    base = adminUrl(io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`orders-admin: ${error.message}\n`);
    return 2;
  }
  let response: Response;
  try {
    response = await fetch(`${base}${request.path}`, {
      method: request.method,
      ...(request.body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    const cause =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : error instanceof Error ? error.message : String(error);
    io.stderr.write(`orders-admin: cannot reach the admin listener at ${base} (ADMIN_ADDR): ${cause}\n`);
    return 1;
  }
  const text = await response.text();
  if (response.ok) {
    io.stdout.write(`${text}\n`);
    return 0;
  }
  if (response.status === 404) {
    // Every name and path sent is one the simulator knows: a 404 means there is none.
    io.stderr.write(`orders-admin: ${base} has no simulator: start the service with --embedded\n`);
    return 1;
  }
  io.stderr.write(`orders-admin: ${request.method} ${request.path}: ${response.status} ${text}\n`);
  return 1;
}

/** `simulate` as orders-admin runs it (bin/orders-admin.ts). */
export const SIMULATE: AdminCommand = {
  name: 'simulate',
  usage: SIMULATE_USAGE,
  environment: "  ADMIN_ADDR       simulate: the service's admin listener (default 127.0.0.1:8081)\n",
  run: runSimulateCli,
};
