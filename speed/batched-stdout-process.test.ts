import { describeLogDestination } from '../test/support/log-destination-cases.ts';

// Rule LOG-turn-batched on the speed ring's stdout (ring.ts: batchedStdout), the same checks as the plain core's.
const BATCHED = JSON.stringify(new URL('./batched-stdout.ts', import.meta.url).href);
describeLogDestination("the speed ring's batched stdout (batched-stdout.ts)", `(await import(${BATCHED})).batchedStdout()`);
