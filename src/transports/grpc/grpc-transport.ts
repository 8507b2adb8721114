import type { TransportFactory } from '../../composition/create-app.ts';
import { createKoaApp } from '../koa/koa-app.ts';
import { createGrpcHandler } from './grpc-handler.ts';
import { HTTP1_SERVER_TIMEOUTS } from '../http/server-timeouts.ts';
import { HTTP2_IDLE_TIMEOUT_MS } from './http2-limits.ts';
import { createOnePortServer, type AnyRequestHandler } from './one-port-server.ts';

/**
 * orders-grpc's public listener (spec 1 transport 3, 4.4): ordersv1.Orders and the REST API on one
 * port. The REST side is the whole Koa app, with its rate limiter, metrics, tracing, logging and
 * recovery inside it; the dispatcher in front of both is not wrapped by any of them (rule 3).
 */
export const grpcTransport: TransportFactory = (core) => {
  // Koa's callback takes node:http and node:http2 compatibility requests alike.
  const rest = createKoaApp(core).callback() as AnyRequestHandler;
  const front = createOnePortServer({ grpc: createGrpcHandler(core), rest, tls: core.config.tls });
  return {
    server: front.server,
    shutdown: front.shutdown,
    // HTTP/1.1 connections keep the shared limits; HTTP/2 sessions are closed after their own idle time.
    timeouts: { ...HTTP1_SERVER_TIMEOUTS, idleMs: Math.max(HTTP1_SERVER_TIMEOUTS.idleMs, HTTP2_IDLE_TIMEOUT_MS) },
  };
};
