/**
 * The few lines a person at a terminal reads once the listeners are bound: where the API, its docs page and
 * the admin listener are, and with --embedded the console and the demo logins. runMain writes them only when
 * stdout is a terminal; a pipe (a log collector, a test) gets the JSON log lines alone.
 */
import type { ListenAddress } from '../config/env.ts';

export interface BannerFacts {
  readonly serviceName: string;
  readonly api: ListenAddress;
  readonly admin: ListenAddress;
  /** The public listener speaks TLS (TLS_CERT_FILE, TLS_KEY_FILE). */
  readonly secure: boolean;
  readonly embedded: boolean;
  /** The demo logins as `user / password` (embedded only). */
  readonly logins: readonly string[];
}

/** An address a browser can open: every interface (`:8080`, 0.0.0.0, ::) is reached through localhost. */
function origin(scheme: string, { host, port }: ListenAddress): string {
  const name = host === undefined || host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${name}:${port}`;
}

export function startBanner(facts: BannerFacts): string {
  const api = origin(facts.secure ? 'https' : 'http', facts.api);
  const admin = origin('http', facts.admin);
  const lines = [
    `${facts.serviceName} is running${facts.embedded ? ' on in-memory backends (--embedded)' : ''}; Ctrl-C stops it.`,
    `  API       ${api}`,
    `  API docs  ${api}/swagger/`,
    `  admin     ${admin}/healthz  ${admin}/metrics`,
  ];
  if (facts.embedded) lines.push(`  console   ${admin}/console/`);
  if (facts.logins.length > 0) lines.push(`  logins    ${facts.logins.join(', ')}`);
  return `\n${lines.join('\n')}\n\n`;
}
