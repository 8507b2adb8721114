import { HTTP1_SERVER_TIMEOUTS, type ServerTimeouts } from './server-timeouts.ts';

/**
 * Timeouts that Node's servers enforce, not our Clock: HTTP/1.1 headersTimeout, requestTimeout and
 * keepAliveTimeout, the one-port listener's protocol sniff and its HTTP/2 session deadlines. Production
 * uses the declared constants (server-timeouts.ts, packages/one-port-grpc); a test harness passes shorter
 * ones in composition (AppOptions.platformTimeouts) to see them enforced without waiting tens of seconds.
 * No environment variable sets them: they are our choice for spec 8's "timeouts: not shown".
 */
export interface PlatformTimeouts {
  readonly headersMs?: number;
  readonly requestMs?: number;
  /** HTTP/1.1 keep-alive: an idle connection is closed after this. */
  readonly keepAliveMs?: number;
  /** One-port listener: a connection that has not shown its protocol by then is dropped. */
  readonly sniffMs?: number;
  /** One-port listener: an HTTP/2 session with no open stream is closed after this. */
  readonly http2IdleMs?: number;
  /** One-port listener: an HTTP/2 stream's request must have ended by then. */
  readonly http2StreamRequestMs?: number;
}

/** The HTTP/1.1 timeouts a server gets: the declared ones unless a test asked for others. */
export function http1Timeouts(overrides: PlatformTimeouts = {}): ServerTimeouts {
  return {
    headersMs: overrides.headersMs ?? HTTP1_SERVER_TIMEOUTS.headersMs,
    requestMs: overrides.requestMs ?? HTTP1_SERVER_TIMEOUTS.requestMs,
    idleMs: overrides.keepAliveMs ?? HTTP1_SERVER_TIMEOUTS.idleMs,
  };
}
