/**
 * orders-grpc's public listener (spec 1 transport 3, 4.4): ordersv1.Orders and the REST API on one port,
 * built on packages/one-port-grpc. This file adapts it to the service: the gRPC handler
 * (handler.ts, with its metrics and tracing observer), the REST side, the declared timeouts and
 * the graceful stop every executable shares.
 *
 * The REST side is orders-stdlib's handler (its chain: recovery, tracing, metrics, request logging, rate
 * limiter, router); the dispatcher in front of both is not wrapped by any of them (rule
 * ONEPORT-mw-rest-only). It was the Koa app once; nothing on this executable needs Koa, so its REST
 * variant is the standard-library router's (rule SHAPE-login-empty-router-framework).
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
import { drainHttp1, SHUTDOWN_GRACE_MS, SHUTDOWN_IDLE_QUIET_MS, trackConnections } from '../http/server/shutdown.ts';
import { http1Timeouts } from '../http/server/timeouts.ts';

export const grpcTransport: TransportFactory = (core, choices = {}) => {
  // The handler reads only what node:http and node:http2's compatibility API have in common.
  const rest = createStdlibHandler(core) as AnyRequestHandler;
  // Production: the declared timeouts; a test harness's shorter ones otherwise (http/server/timeouts.ts).
  const overrides = choices.platformTimeouts ?? {};
  const http1 = http1Timeouts(overrides);
  const http2IdleMs = overrides.http2IdleMs ?? HTTP2_IDLE_TIMEOUT_MS;
  const front = createOnePortServer({
    grpc: createGrpcHandler(core),
    rest,
    http1: restHttp1Side(rest, { timeouts: http1, response: choices.http1Response }),
    tls: core.config.tls,
    // Undefined (production) gives the package's declared value.
    sniffTimeoutMs: overrides.sniffMs,
    http2Limits: { idleMs: http2IdleMs, streamRequestMs: overrides.http2StreamRequestMs },
    graceMs: SHUTDOWN_GRACE_MS,
    quietMs: SHUTDOWN_IDLE_QUIET_MS,
  });
  return {
    server: front.server,
    shutdown: front.shutdown,
    // HTTP/1.1 connections keep the shared limits; HTTP/2 sessions are closed after their own idle time.
    timeouts: { ...http1, idleMs: Math.max(http1.idleMs, http2IdleMs) },
  };
};

/**
 * The HTTP/1.1 side of the port: the same hardened node:http server as the other executables (timeouts
 * enforced as declared, JSON answers to parser errors, CONNECT, Expect: http/server/http1.ts),
 * stopped as they are: `Connection: close` on what is in flight, idle connections closed once quiet
 * (http/server/shutdown.ts).
 */
export function restHttp1Side(rest: AnyRequestHandler, settings?: Http1Settings): Http1Side {
  const server = createHttp1Server(rest, settings);
  trackConnections(server);
  return { server, drain: (graceMs) => drainHttp1(server, graceMs) };
}
