import type { ServerResponse } from 'node:http';
import type { Tracer } from '@opentelemetry/api';
import type { DestinationStream } from 'pino';
import type { StreamPublisherFactory } from '../adapters/nats/nats-event-bus.ts';
import type { Transactional } from '../adapters/postgres/postgres-database.ts';
import type { Clock } from '../ports/clock.ts';
import type { OrderCache } from '../ports/order-cache.ts';
import type { OrderRepository } from '../ports/order-repository.ts';
import type { TokenService } from '../service/token-service.ts';

/**
 * What an opt-in speed ring may replace (speed/README.md). Every hook is optional and its plain default
 * is the core's own code, named below; behaviour to the spec is the same with or without the ring. The
 * executables switch the ring on in main.ts (one line); createApp and startService run plain unless
 * given one, so tests see the core unless they ask.
 */
export interface SpeedRing {
  /** The ServerResponse class of every public HTTP/1.1 server (rule CHAIN-turn-end-writes). Plain: Node's own. */
  readonly http1Response?: typeof ServerResponse;
  /** Where the executables' log lines go (rule LOG-turn-batched). Plain: pino's destination (observability/logger.ts). */
  readonly stdout?: () => DestinationStream;
  /** The tracer when no span is ever exported (rule TRACE-no-exporter-work). Plain: the SDK's, with no processor. */
  readonly unexportedTracer?: () => Tracer;
  /** The token service (rule AUTH-1-hs256). Plain: TokenService, which checks every token it is given. */
  readonly tokenService?: typeof TokenService;
  /** What the order service reads orders through (rule SVC-near-cache). Plain: the shared cache itself. */
  readonly orderCache?: (shared: OrderCache, clock: Clock | undefined) => OrderCache;
  /** Real backends: the order repository (rule SVC-create-durable). Plain: PostgresOrderRepository on the same database. */
  readonly orderRepository?: (database: Transactional) => OrderRepository;
  /** Real backends: how the relay's publishes are acknowledged (rule EVT-7-delivery). Plain: js.publish. */
  readonly streamPublisher?: StreamPublisherFactory;
}
