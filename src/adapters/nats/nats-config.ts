import { ConfigError, requireVar, type Env } from '../../config/env.ts';

/** Broker settings (spec 8.1). */
export interface NatsConfig {
  /** NATS_URL split on commas, as NATS clients accept a server list. */
  readonly servers: readonly string[];
  /** The servers without any user:password part, for log lines and error messages. */
  readonly display: string;
}

const WITH_SCHEME = /^(nats|tls):\/\/[^\s/]+$/i;

/** Spec 8.1: NATS_URL is required and carries a scheme, e.g. nats://host:port. The raw value is never echoed. */
export function natsConfigFromEnv(env: Env): NatsConfig {
  const raw = requireVar(env, 'NATS_URL');
  const servers = raw.split(',').map((s) => s.trim());
  const display: string[] = [];
  for (const server of servers) {
    let url: URL | undefined;
    try {
      url = WITH_SCHEME.test(server) ? new URL(server) : undefined;
      // Stryker disable next-line BlockStatement: equivalent: url, declared in this iteration, is still undefined when new URL throws
    } catch {
      url = undefined;
    }
    if (url === undefined || url.host === '') {
      throw new ConfigError('config: NATS_URL must be a URL with a scheme, for example nats://127.0.0.1:4222');
    }
    display.push(`${url.protocol}//${url.host}`);
  }
  return { servers, display: display.join(',') };
}
