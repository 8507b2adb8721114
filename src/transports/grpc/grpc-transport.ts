/**
 * orders-grpc's public listener (spec 1 transport 3, 4.4): ordersv1.Orders and the REST API on one port,
 * on packages/one-port-grpc, adapted to the service: the gRPC handler (handler.ts), the REST side, the
 * declared timeouts and the graceful stop every executable shares. The REST side is orders-stdlib's
 * handler with its chain; the dispatcher in front is wrapped by none of it (rule ONEPORT-mw-rest-only).
 * Nothing here needs Koa, so its REST variant is the standard-library one (rule SHAPE-login-empty-router-framework).
 */
import {
  createOnePortServer,
  HTTP2_IDLE_TIMEOUT_MS,
  type AnyRequestHandler,
  type Http1Side,
} from '../../../packages/one-port-grpc/index.ts';
import type { TransportFactory } from '../transport.ts';
import { createStdlibHandler } from '../stdlib/server.ts';
import { createGrpcHandler } from './handler.ts';
import { createHttp1Server, type Http1Settings } from '../http/server/http1.ts';
import { drainHttp1, SHUTDOWN_GRACE_MS, SHUTDOWN_IDLE_QUIET_MS } from '../http/server/shutdown.ts';
import { http1Timeouts } from '../http/server/timeouts.ts';

export const grpcTransport: TransportFactory = (core, choices = {}) => {
  // The handler reads only what node:http and node:http2's compatibility API have in common.
  const rest = createStdlibHandler(core) as AnyRequestHandler;
  const overrides = choices.platformTimeouts ?? {};
  const http1 = http1Timeouts(overrides);
  const http2IdleMs = overrides.http2IdleMs ?? HTTP2_IDLE_TIMEOUT_MS;
  const front = createOnePortServer({
    grpc: createGrpcHandler(core),
    rest,
    http1: restHttp1Side(rest, { timeouts: http1, response: choices.http1Response }),
    tls: core.config.tls,
    // Undefined (production): the package's declared values.
    sniffTimeoutMs: overrides.sniffMs,
    http2Limits: { idleMs: http2IdleMs, streamRequestMs: overrides.http2StreamRequestMs },
    graceMs: SHUTDOWN_GRACE_MS,
    quietMs: SHUTDOWN_IDLE_QUIET_MS,
  });
  // HTTP/1.1 connections keep the shared limits; HTTP/2 sessions close after their own idle time.
  return { server: front.server, shutdown: front.shutdown, timeouts: { ...http1, idleMs: Math.max(http1.idleMs, http2IdleMs) } };
};

/** The port's HTTP/1.1 side: the same hardened server as the other executables (http/server/http1.ts), drained as they are. */
export function restHttp1Side(rest: AnyRequestHandler, settings?: Http1Settings): Http1Side {
  const server = createHttp1Server(rest, settings);
  return { server, drain: (graceMs) => drainHttp1(server, graceMs) };
}
