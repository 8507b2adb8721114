/**
 * one-port-grpc: gRPC (unary and server-streaming, protobuf) and REST on one port, HTTP/1.1 and h2c at
 * once, routed per request (README.md). What the orders transport builds on; everything under private/
 * is internal.
 */
export { createOnePortServer, SNIFF_TIMEOUT_MS, STOP_GRACE_MS, STOP_QUIET_MS } from './private/front.ts';
export type { AnyRequest, AnyRequestHandler, AnyResponse, Http1Side, OnePortOptions, OnePortServer } from './private/front.ts';
export { createUnaryServer } from './private/unary-server.ts';
export type { CallKind, CallObservation, CallObserver, CallStatus, UnaryCall, UnaryMethod } from './private/unary-server.ts';
export type { ServerStreamMethod, UnaryServerOptions } from './private/unary-server.ts';
export { HTTP2_ACTIVE_STREAMS, HTTP2_GUARD_TICK_MS, HTTP2_IDLE_TIMEOUT_MS, HTTP2_MAX_CONCURRENT_STREAMS } from './private/http2-limits.ts';
export { HTTP2_MAX_HEADER_LIST_BYTES, HTTP2_RESET_ALLOWANCE, HTTP2_STREAM_REQUEST_TIMEOUT_MS } from './private/http2-limits.ts';
export { HTTP2_STREAM_WRITE_TIMEOUT_MS } from './private/http2-limits.ts';
export type { Http2Limits } from './private/http2-limits.ts';
export { MAX_MESSAGE_BYTES } from './private/wire.ts';
