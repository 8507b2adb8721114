import type { TransportFactory } from '../transport.ts';
import { createStdlibHandler } from '../stdlib/server.ts';
import { createGrpcHandler } from './handler.ts';
import { http1Timeouts } from '../http/server/timeouts.ts';
import { HTTP2_IDLE_TIMEOUT_MS } from './http2-limits.ts';
import { createOnePortServer, type AnyRequestHandler } from './one-port-server.ts';

/**
 * orders-grpc's public listener (spec 1 transport 3, 4.4): ordersv1.Orders and the REST API on one
 * port. The REST side is orders-stdlib's handler (its chain: recovery, tracing, metrics, request
 * logging, rate limiter, router); the dispatcher in front of both is not wrapped by any of them (rule 3).
 * It was the Koa app once: Koa's per-request machinery made this side cost 1.35x
 * orders-stdlib's CPU per GET (bench/ab.ts), and nothing on this executable needs
 * Koa. Its REST variant is therefore the standard-library router's (rule SHAPE-login-empty-router-framework).
 */
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
    tls: core.config.tls,
    http1: { timeouts: http1, response: choices.http1Response },
    // Undefined (production) gives the declared value: both options are read with `??`.
    sniffTimeoutMs: overrides.sniffMs,
    http2Guard: { idleMs: http2IdleMs, streamRequestMs: overrides.http2StreamRequestMs },
  });
  return {
    server: front.server,
    shutdown: front.shutdown,
    // HTTP/1.1 connections keep the shared limits; HTTP/2 sessions are closed after their own idle time.
    timeouts: { ...http1, idleMs: Math.max(http1.idleMs, http2IdleMs) },
  };
};
