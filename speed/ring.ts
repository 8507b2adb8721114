/**
 * The speed ring as the one value composition applies (src/composition/main.ts for the executables; the
 * `speed` option of startService for tests and the bench). Each hook's plain default: src/composition/speed-hooks.ts.
 */
import type { SpeedRing } from '../src/composition/speed-hooks.ts';
import { batchedStdout } from './batched-stdout.ts';
import { NearOrderCache } from './near-order-cache.ts';
import { CoalescingOrderRepository } from './placement-coalescer.ts';
import { RememberedTokens } from './remembered-tokens.ts';
import { sharedReplyPublisher } from './stream-acks.ts';
import { TurnEndResponse } from './turn-end-response.ts';
import { UnexportedTracer } from './unexported-tracer.ts';

export const speedRing: SpeedRing = {
  http1Response: TurnEndResponse,
  stdout: batchedStdout,
  unexportedTracer: () => new UnexportedTracer(),
  tokenService: RememberedTokens,
  orderCache: (shared, clock) => new NearOrderCache(shared, { clock }),
  orderRepository: (database) => new CoalescingOrderRepository(database),
  streamPublisher: sharedReplyPublisher,
};
