// `orders-admin simulate …` (bin/orders-admin.ts adds it): the simulator's control API from the command line,
// one request to the admin listener at ADMIN_ADDR and its JSON answer on stdout (rule SIM-embedded-only).
import type { AdminCliIo, AdminCommand } from '../src/cli/admin-cli.ts';
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

type Request = { readonly method: 'GET' | 'PUT' | 'POST'; readonly path: string; readonly body?: Readonly<Record<string, unknown>> };

const COMPONENTS = ['database', 'cache', 'publisher'];

/** The words after `simulate` as one control API request, or what is wrong with them. */
export function parseSimulate(args: readonly string[]): Request | string {
  const [verb, first, second, ...rest] = args;
  // A word left out is refused as a wrong one is.
  const component = COMPONENTS.find((known) => known === first);
  const path = `/simulator/components/${component}`;
  if (rest.length > 0) return `unknown arguments: simulate ${args.join(' ')}`;
  if (verb === 'status' && first === undefined) return { method: 'GET', path: '/simulator' };
  if (verb === 'reset' && first === undefined) return { method: 'POST', path: '/simulator/reset' };
  if ((verb === 'down' || verb === 'up') && second === undefined) {
    return component === undefined
      ? `simulate ${verb}: expected one of ${COMPONENTS.join(', ')}`
      : { method: 'PUT', path, body: { state: verb } };
  }
  if (verb === 'slow' || verb === 'fail') {
    if (component === undefined || !/^\d+$/.test(second ?? ''))
      return `simulate ${verb}: expected <${COMPONENTS.join('|')}> <${verb === 'slow' ? 'ms' : 'n'}>`;
    return { method: 'PUT', path, body: verb === 'slow' ? { latencyMs: Number(second) } : { failNext: Number(second) } };
  }
  if (verb === 'advance' && first !== undefined && second === undefined) {
    const ms = parseDuration(first);
    // No duration (undefined) is no integer either.
    if (Number.isInteger(ms)) return { method: 'POST', path: '/simulator/clock/advance', body: { ms } };
    return 'simulate advance: expected a duration such as 5m, 2h or 90s';
  }
  return args.length === 0 ? 'simulate: missing command' : `unknown arguments: simulate ${args.join(' ')}`;
}

/** ADMIN_ADDR as a URL to dial: a wildcard host (`:8081`, 0.0.0.0) means this machine. */
export function adminUrl(env: Env): string {
  const { host, port } = parseListenAddress('ADMIN_ADDR', env['ADMIN_ADDR'] || '127.0.0.1:8081');
  const dial = host === undefined || host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${dial.includes(':') ? `[${dial}]` : dial}:${port}`;
}

/** Exit 0 with the answer, 1 when the listener refused or could not be reached, 2 for bad words or ADMIN_ADDR. */
export async function runSimulateCli(args: readonly string[], io: Omit<AdminCliIo, 'stdin'>): Promise<number> {
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
    const body = request.body && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request.body) };
    response = await fetch(`${base}${request.path}`, { method: request.method, ...body, signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause : error).message : String(error);
    io.stderr.write(`orders-admin: cannot reach the admin listener at ${base} (ADMIN_ADDR): ${cause}\n`);
    return 1;
  }
  const text = await response.text();
  if (response.ok) io.stdout.write(`${text}\n`);
  // Every name and path sent is one the simulator knows: a 404 means there is none.
  else if (response.status === 404) io.stderr.write(`orders-admin: ${base} has no simulator: start the service with --embedded\n`);
  else io.stderr.write(`orders-admin: ${request.method} ${request.path}: ${response.status} ${text}\n`);
  return response.ok ? 0 : 1;
}

export const SIMULATE: AdminCommand = {
  name: 'simulate',
  usage: SIMULATE_USAGE,
  environment: "  ADMIN_ADDR       simulate: the service's admin listener (default 127.0.0.1:8081)\n",
  run: runSimulateCli,
};
