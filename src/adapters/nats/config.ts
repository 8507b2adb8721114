/** The broker's settings from NATS_URL (spec 8.1): the server list and its credentials, never echoed. */
import { ConfigError, requireVar, type Env } from '../../config/env.ts';

export interface NatsConfig {
  /** NATS_URL split on commas, as NATS clients accept a server list. */
  readonly servers: readonly string[];
  /** The servers without any user:password part, for log lines and error messages. */
  readonly display: string;
  /**
   * NATS_URL's user-info, decoded: `user:password`, or a token alone (`nats://<token>@host`, the NATS
   * convention). The client (nats.js) does not read a URL's own user-info, so it is handed over as options.
   */
  readonly credentials?: NatsCredentials;
}

export type NatsCredentials = { readonly user: string; readonly pass: string } | { readonly token: string };

const WITH_SCHEME = /^(nats|tls):\/\/[^\s/]+$/i;

/** Spec 8.1: NATS_URL is required and carries a scheme, e.g. nats://host:port. The raw value is never echoed. */
export function natsConfigFromEnv(env: Env): NatsConfig {
  const raw = requireVar(env, 'NATS_URL');
  const servers = raw.split(',').map((s) => s.trim());
  const display: string[] = [];
  // The user-info of the servers that carry one (`user:password`, as written), and what it decodes to.
  let userInfo: string | undefined;
  let credentials: NatsCredentials | undefined;
  for (const server of servers) {
    const url = WITH_SCHEME.test(server) ? URL.parse(server) : null;
    if (url === null || url.host === '') {
      throw new ConfigError('NATS_URL must be a URL with a scheme, for example nats://127.0.0.1:4222');
    }
    display.push(`${url.protocol}//${url.host}`);
    if (url.username === '' && url.password === '') continue;
    const written = `${url.username}:${url.password}`;
    if (userInfo !== undefined && userInfo !== written) {
      throw new ConfigError('NATS_URL servers carry different credentials; give them all the same, or one');
    }
    userInfo = written;
    credentials = credentialsOf(url);
  }
  // The servers go to the client without their user-info: what it would do with it is unspecified.
  return { servers: display, display: display.join(','), ...(credentials === undefined ? {} : { credentials }) };
}

function credentialsOf(url: URL): NatsCredentials {
  try {
    const user = decodeURIComponent(url.username);
    // `nats://<token>@host`: a user with no password is a token (nats-server --auth).
    return url.password === '' ? { token: user } : { user, pass: decodeURIComponent(url.password) };
  } catch {
    throw new ConfigError('NATS_URL credentials are not valid percent-encoding');
  }
}
