import type { Env } from '../../src/config/env.ts';
import { realBackendsConfigured } from '../../test/support/in-process-app.ts';
import type { DriverName } from '../drivers/driver.ts';
import { DRIVER_NAMES } from '../drivers/drivers.ts';
import { DEMO_ACCOUNTS, type Credentials, type ExternalOptions } from '../targets/target.ts';
import type { RestVariant, Transport } from '../../test/support/transports.ts';

/** The filters `npm run conformance -- --transport … --backend … --driver …` passes through env. */
export interface Filters {
  readonly transports: readonly string[] | undefined;
  readonly backends: readonly string[] | undefined;
  readonly drivers: readonly string[] | undefined;
  readonly external: ExternalOptions | undefined;
}

function list(value: string | undefined): string[] | undefined {
  const items = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return items.length === 0 ? undefined : items;
}

function accounts(value: string | undefined): Credentials[] {
  const items = list(value);
  if (items === undefined) return [...DEMO_ACCOUNTS];
  return items.map((item) => {
    const at = item.indexOf(':');
    if (at <= 0) throw new Error(`CONFORMANCE_USERS: expected name:password, got ${item}`);
    return { username: item.slice(0, at), password: item.slice(at + 1) };
  });
}

function restVariant(value: string | undefined): RestVariant | undefined {
  if (value === undefined || value === '') return undefined;
  if (value !== 'stdlib-router' && value !== 'router-framework')
    throw new Error(`CONFORMANCE_REST_VARIANT: expected stdlib-router or router-framework, got ${value}`);
  return value;
}

export function filtersFromEnv(env: Env = process.env): Filters {
  const url = env['CONFORMANCE_URL'];
  return {
    transports: list(env['CONFORMANCE_TRANSPORT']),
    backends: list(env['CONFORMANCE_BACKEND']),
    drivers: list(env['CONFORMANCE_DRIVER']),
    external:
      url === undefined || url === ''
        ? undefined
        : {
            url,
            adminUrl: env['CONFORMANCE_ADMIN_URL'] || undefined,
            users: accounts(env['CONFORMANCE_USERS']),
            restVariant: restVariant(env['CONFORMANCE_REST_VARIANT']),
            otlpListen: env['CONFORMANCE_OTLP_LISTEN'] || undefined,
            // Read from the environment only, never a flag: a secret stays out of argv and the report's filters.
            jwtSecret: env['CONFORMANCE_JWT_SECRET'] || undefined,
            launch: list(env['CONFORMANCE_LAUNCH']?.replaceAll(' ', ',')),
          },
  };
}

/** One transport × backend: the shared target and the driver columns that run against it. */
export interface TargetGroup {
  readonly transport: Transport | undefined;
  readonly transportName: string;
  readonly backend: 'fake' | 'real' | 'spawned' | 'external';
  readonly drivers: readonly DriverName[];
  /** Per-transport process cases run in a `process` column (fake backend only). */
  readonly processColumn: boolean;
}

export interface Matrix {
  readonly groups: readonly TargetGroup[];
  readonly notes: readonly string[];
}

/**
 * What one test file of the matrix runs (conformance/columns/*.test.ts): its transports, backends and
 * drivers (`process` for the process column), or the external instance. The CONFORMANCE_* filters narrow it further.
 */
export interface MatrixSlice {
  /** The file's results go to reports/conformance-results/<name>.json. */
  readonly name: string;
  readonly transports?: readonly string[];
  readonly backends?: readonly ('fake' | 'real' | 'spawned')[];
  readonly drivers?: readonly string[];
  /** The instance given by --url (and nothing else). */
  readonly external?: boolean;
}

function both(a: readonly string[] | undefined, b: readonly string[] | undefined): readonly string[] | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a.filter((x) => b.includes(x));
}

/** The filters of one slice: the command line's, narrowed to the slice (nothing when --url and the slice disagree). */
export function sliceFilters(filters: Filters, slice: MatrixSlice): Filters {
  const none: Filters = { transports: [], backends: [], drivers: [], external: undefined };
  if (slice.external === true) return filters.external === undefined ? none : filters;
  if (filters.external !== undefined) return none;
  // Without --backend: fake and real (spawned runs only when asked for, see buildMatrix).
  return {
    transports: both(filters.transports, slice.transports),
    backends: both(filters.backends ?? ['fake', 'real'], slice.backends),
    drivers: both(filters.drivers, slice.drivers),
    external: undefined,
  };
}

const allows = (filter: readonly string[] | undefined, value: string): boolean => filter === undefined || filter.includes(value);

export function buildMatrix(filters: Filters, transports: readonly Transport[], env: Env = process.env): Matrix {
  const notes: string[] = [];
  if (filters.external !== undefined) {
    const drivers = (filters.drivers ?? ['rest-http1']).filter((d): d is DriverName => (DRIVER_NAMES as readonly string[]).includes(d));
    notes.push(
      `conformance: external target ${filters.external.url} (admin ${filters.external.adminUrl ?? 'not given'}, REST variant ${filters.external.restVariant ?? 'not given'}): black-box cases only; a 429 is retried after its Retry-After`,
    );
    return {
      groups: [{ transport: undefined, transportName: 'external', backend: 'external', drivers, processColumn: false }],
      notes,
    };
  }
  // The backend variables are read only when the real column is asked for (npm test's slices are fake only).
  const real = allows(filters.backends, 'real') && realBackendsConfigured(env);
  if (!real && allows(filters.backends, 'real')) {
    notes.push('conformance: real backends not configured (set POSTGRES_DSN, REDIS_ADDR and NATS_URL); real column not run');
  }
  // `spawned` (each executable run --embedded, black-box through the simulator) only when asked for:
  // starting executables is slow, so npm test leaves it to conformance:report and a focused test.
  const backends = (['fake', 'real', 'spawned'] as const).filter((b) =>
    b === 'spawned' ? filters.backends?.includes('spawned') === true : allows(filters.backends, b) && (b === 'fake' || real),
  );
  const groups: TargetGroup[] = [];
  for (const transport of transports) {
    if (!allows(filters.transports, transport.name)) continue;
    for (const backend of backends) {
      groups.push({
        transport,
        transportName: transport.name,
        backend,
        drivers: transport.drivers.filter((d) => allows(filters.drivers, d)),
        processColumn: backend === 'fake' && allows(filters.drivers, 'process'),
      });
    }
  }
  return { groups, notes };
}
