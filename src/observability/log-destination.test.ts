import { describeLogDestination } from '../../test/support/log-destination-cases.ts';

// Rule LOG-turn-batched on the plain core's stdout: pino's own destination options (logger.ts).
describeLogDestination("pino's destination options (logger.ts)", '');
