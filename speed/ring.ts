/**
 * The speed ring: every speed-only mechanism, as the one value composition applies (src/composition/main.ts
 * for the executables; startService's `speed` option for tests and the bench). Each hook replaces plain
 * core code that keeps the same rules (src/composition/speed-hooks.ts names the defaults); the measured
 * gain of each is in its file's header and in README.md here.
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
