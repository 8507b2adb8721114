import type { DestinationStream } from 'pino';
import { batchedStdout } from '../observability/batched-stdout.ts';

/**
 * Where a running service's log lines go (rule LOG-turn-batched), for the executables (main.ts) and the
 * bench's server children alike. A speed seam: return `stdoutDestination()` (observability/logger.ts) and
 * delete batched-stdout.ts to batch with pino's own destination options instead.
 */
export function processStdout(): DestinationStream {
  return batchedStdout();
}
