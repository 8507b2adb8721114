import type { TransportFactory } from '../../composition/create-app.ts';
import { createStdlibHandler } from '../stdlib/stdlib-server.ts';
import { createGrpcHandler } from './grpc-handler.ts';
import { HTTP1_SERVER_TIMEOUTS } from '../http/server-timeouts.ts';
import { HTTP2_IDLE_TIMEOUT_MS } from './http2-limits.ts';
import { createOnePortServer, type AnyRequestHandler } from './one-port-server.ts';

/**
 * orders-grpc's public listener (spec 1 transport 3, 4.4): ordersv1.Orders and the REST API on one
 * port. The REST side is orders-stdlib's handler (its chain: recovery, tracing, metrics, request
 * logging, rate limiter, router); the dispatcher in front of both is not wrapped by any of them (rule 3).
 * It was the Koa app until issue 16: Koa's per-request machinery made this side cost 1.35x
 * orders-stdlib's CPU per GET (bench/ab.ts, issue 16), and nothing on this executable needs
 * Koa. Its REST variant is therefore the standard-library router's (rule SHAPE-login-empty-router-framework).
 */
export const grpcTransport: TransportFactory = (core) => {
  // The handler reads only what node:http and node:http2's compatibility API have in common.
  const rest = createStdlibHandler({ api: core.api, tokens: core.tokens, observability: core.observability, limiter: core.rateLimiter }) as AnyRequestHandler;
  const front = createOnePortServer({ grpc: createGrpcHandler(core), rest, tls: core.config.tls });
  return {
    server: front.server,
    shutdown: front.shutdown,
    // HTTP/1.1 connections keep the shared limits; HTTP/2 sessions are closed after their own idle time.
    timeouts: { ...HTTP1_SERVER_TIMEOUTS, idleMs: Math.max(HTTP1_SERVER_TIMEOUTS.idleMs, HTTP2_IDLE_TIMEOUT_MS) },
  };
};
