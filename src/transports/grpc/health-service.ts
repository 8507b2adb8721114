/**
 * grpc.health.v1.Health on the public port (rule GRPC-health): SERVING exactly when the readiness report
 * (/readyz) is clean, NOT_SERVING otherwise.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { create, type Message } from '@bufbuild/protobuf';
import type { Principal } from '../../service/authenticate.ts';
import type { HealthReport } from '../../lifecycle/checker.ts';
import { Health, HealthCheckResponse_ServingStatus as ServingStatus, type HealthCheckRequest } from '../../gen/grpc/health/v1/health_pb.js';
import { Orders } from '../../gen/ordersv1/orders_pb.js';
import { fullMethodName } from './orders-service.ts';
import type { ServerStreamMethod, UnaryMethod } from '../../../packages/one-port-grpc/index.ts';
import { ErrNotFound } from '../../domain/errors.ts';

/** How often a Watch looks at readiness again; it sends only changes. */
export const HEALTH_WATCH_INTERVAL_MS = 5_000;

/** The services health can be asked about: the whole server ("") and ordersv1.Orders. */
const KNOWN_SERVICES: ReadonlySet<string> = new Set(['', Orders.typeName]);

function statusOf(report: HealthReport): ServingStatus {
  return report.clean ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
}

export function createHealthMethods(
  readiness: () => Promise<HealthReport>,
  watchIntervalMs = HEALTH_WATCH_INTERVAL_MS,
): Map<string, UnaryMethod<Principal> | ServerStreamMethod<Principal>> {
  const response = (status: ServingStatus): Message => create(Health.method.check.output, { status });
  const check: UnaryMethod<Principal> = {
    input: Health.method.check.input,
    output: Health.method.check.output,
    handle: async (req) => {
      // An unknown service name: NOT_FOUND (the protocol's rule), through the one error table.
      if (!KNOWN_SERVICES.has((req as HealthCheckRequest).service)) throw new ErrNotFound();
      return response(statusOf(await readiness()));
    },
  };
  const watch: ServerStreamMethod<Principal> = {
    kind: 'server-stream',
    input: Health.method.watch.input,
    output: Health.method.watch.output,
    handle: async (req, call, send) => {
      if (!KNOWN_SERVICES.has((req as HealthCheckRequest).service)) {
        // Watch keeps the stream open for an unknown name, saying so (the protocol's rule).
        send(response(ServingStatus.SERVICE_UNKNOWN));
        return new Promise((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
      }
      let last: ServingStatus | undefined;
      while (!call.signal.aborted) {
        const status = statusOf(await readiness());
        if (status !== last && !call.signal.aborted) send(response(status));
        last = status;
        // Until the next look or the call's end; the timer and its abort listener go either way (none piles up).
        await sleep(watchIntervalMs, undefined, { signal: call.signal }).catch(() => undefined);
      }
    },
  };
  return new Map<string, UnaryMethod<Principal> | ServerStreamMethod<Principal>>([
    [fullMethodName(Health.method.check), check],
    [fullMethodName(Health.method.watch), watch],
  ]);
}
