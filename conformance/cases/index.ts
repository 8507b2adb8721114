import type { Case } from '../case-model.ts';
import { ADMIN_CASES } from './admin.ts';
import { AUTH_CASES } from './auth.ts';
import { CONTRACT_CASES } from './contract.ts';
import { ERROR_CASES } from './errors.ts';
import { EVENT_CASES } from './events.ts';
import { LIST_CASES } from './list.ts';
import { OBSERVABILITY_CASES } from './observability.ts';
import { ONE_PORT_CASES } from './one-port.ts';
import { ORDER_CASES } from './orders.ts';
import { PROCESS_CORE_CASES } from './process-core.ts';
import { PROCESS_TRANSPORT_CASES } from './process-transport.ts';
import { RATE_LIMIT_CASES } from './rate-limit.ts';
import { SESSION_CASES } from './session.ts';

/** Every conformance case, in run order within a column (cases marked `last` run after the rest). */
export const ALL_CASES: readonly Case[] = [
  ...AUTH_CASES,
  ...ORDER_CASES,
  ...LIST_CASES,
  ...SESSION_CASES,
  ...ERROR_CASES,
  ...ADMIN_CASES,
  ...OBSERVABILITY_CASES,
  ...EVENT_CASES,
  ...CONTRACT_CASES,
  ...RATE_LIMIT_CASES,
  ...ONE_PORT_CASES,
  ...PROCESS_TRANSPORT_CASES,
  ...PROCESS_CORE_CASES,
];
