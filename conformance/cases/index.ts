import type { Case } from '../case-model.ts';
import { ABUSE_CASES } from './abuse.ts';
import { ADMIN_CASES } from './admin.ts';
import { AUTH_CASES } from './auth.ts';
import { CONTRACT_CASES } from './contract.ts';
import { DOCS_PAGE_CASES } from './docs-page.ts';
import { EDGE_LIMIT_CASES } from './edge-limits.ts';
import { ERROR_CASES } from './errors.ts';
import { IDEMPOTENCY_CASES } from './idempotency.ts';
import { EVENT_CASES } from './events.ts';
import { LIST_CASES } from './list.ts';
import { OBSERVABILITY_CASES } from './observability.ts';
import { ONE_PORT_CASES } from './one-port.ts';
import { ONE_PORT_ATTACK_CASES } from './one-port-attacks.ts';
import { ORDER_CASES } from './orders.ts';
import { PROCESS_TRANSPORT_CASES } from './process-transport.ts';
import { RATE_LIMIT_CASES } from './rate-limit.ts';
import { SESSION_CASES } from './session.ts';
import { SIMULATOR_CASES } from './simulator.ts';

/** Every conformance case, in run order within a column (cases marked `last` run after the rest). */
export const ALL_CASES: readonly Case[] = [
  ...AUTH_CASES,
  ...ORDER_CASES,
  ...IDEMPOTENCY_CASES,
  ...LIST_CASES,
  ...SESSION_CASES,
  ...SIMULATOR_CASES,
  ...ERROR_CASES,
  ...ADMIN_CASES,
  ...OBSERVABILITY_CASES,
  ...EVENT_CASES,
  ...CONTRACT_CASES,
  ...DOCS_PAGE_CASES,
  ...RATE_LIMIT_CASES,
  ...ONE_PORT_CASES,
  ...ONE_PORT_ATTACK_CASES,
  ...EDGE_LIMIT_CASES,
  ...PROCESS_TRANSPORT_CASES,
  ...ABUSE_CASES,
];
