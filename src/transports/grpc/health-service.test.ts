import { getEventListeners } from 'node:events';
import { create, type Message } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { settled } from '../../../test/support/eventually.ts';
import type { HealthReport } from '../../lifecycle/checker.ts';
import type { Principal } from '../../service/authenticate.ts';
import { createHealthMethods } from './health-service.ts';
import type { ServerStreamMethod, UnaryCall } from '../../../packages/one-port-grpc/index.ts';

/**
 * grpc.health.v1.Health/Watch's handler on its own (rules GRPC-health, GRPC-cancel): a readiness report
 * that counts its looks and a call whose done signal the test aborts, as the server does when the
 * client cancels.
 */
function watchCall(intervalMs?: number) {
  let looks = 0;
  const readiness = async (): Promise<HealthReport> => {
    looks += 1;
    return { clean: true, nodes: [] };
  };
  const watch = createHealthMethods(readiness, intervalMs).get('/grpc.health.v1.Health/Watch') as ServerStreamMethod<Principal>;
  const done = new AbortController();
  const call = { method: '/grpc.health.v1.Health/Watch', principal: undefined, signal: done.signal, headers: {}, peer: '127.0.0.1' };
  const sent: Message[] = [];
  const firstSent = Promise.withResolvers<void>();
  const handled = watch.handle(create(watch.input, { service: '' }), call as UnaryCall<Principal>, (m) => {
    sent.push(m);
    firstSent.resolve();
  });
  return { handled, done, sent, firstSent: firstSent.promise, looks: () => looks };
}

describe('health Watch ends with its call (rules GRPC-health, GRPC-cancel)', () => {
  it('the client cancelling ends the handler at once, not at its next look 5 s later', async () => {
    const watch = watchCall();
    await watch.firstSent;
    watch.done.abort();
    await settled(watch.handled, 'the handler ended by the abort');
    // Ended by the abort, not by its next look (5 s away, HEALTH_WATCH_INTERVAL_MS): it looked once only.
    expect([watch.sent.length, watch.looks()]).toEqual([1, 1]);
  });

  it('a long Watch keeps one abort listener on its call, not one more per look', async () => {
    const watch = watchCall(1);
    await watch.firstSent;
    while (watch.looks() < 20) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(getEventListeners(watch.done.signal, 'abort').length).toBeLessThanOrEqual(1);
    watch.done.abort();
    await watch.handled;
    // One message: the status never changed.
    expect(watch.sent.length).toBe(1);
  });
});
