import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TransportFactory } from '../../src/composition/create-app.ts';
import type { DriverName } from '../drivers/driver.ts';

export type TransportName = 'stdlib' | 'koa' | 'grpc';

/**
 * How a transport's REST side treats an empty login field (spec 2.1, 4.1 rule 9): the standard-library
 * router hands it to the service; a router framework rejects it before the handler.
 */
export type RestVariant = 'stdlib-router' | 'router-framework';

export interface TransportEntry {
  readonly name: TransportName;
  /** Module path from the repository root, and the TransportFactory it exports. */
  readonly module: string;
  readonly exportName: string;
  /** The transport's executable (spec 1: each transport is a separate executable). */
  readonly bin: string;
  /** Which drivers run against it: only the one-port executable speaks h2c and gRPC (spec 4.4). */
  readonly drivers: readonly DriverName[];
  readonly restVariant: RestVariant;
}

export const TRANSPORTS: readonly TransportEntry[] = [
  {
    name: 'stdlib',
    module: 'src/transports/stdlib/stdlib-transport.ts',
    exportName: 'stdlibTransport',
    bin: 'bin/orders-stdlib.ts',
    drivers: ['rest-http1'],
    restVariant: 'stdlib-router',
  },
  {
    name: 'koa',
    module: 'src/transports/koa/koa-transport.ts',
    exportName: 'koaTransport',
    bin: 'bin/orders-koa.ts',
    drivers: ['rest-http1'],
    restVariant: 'router-framework',
  },
  {
    name: 'grpc',
    module: 'src/transports/grpc/grpc-transport.ts',
    exportName: 'grpcTransport',
    bin: 'bin/orders-grpc.ts',
    drivers: ['rest-http1', 'rest-h2c', 'grpc'],
    restVariant: 'router-framework',
  },
];

export interface LoadedTransport extends TransportEntry {
  readonly factory: TransportFactory;
}

export interface TransportAvailability {
  readonly available: LoadedTransport[];
  /** Not written yet: one printed line each, not a failure. */
  readonly unavailable: { readonly name: TransportName; readonly reason: string }[];
  /** The module exists but does not load or lacks its export: these fail. */
  readonly broken: { readonly name: TransportName; readonly error: string }[];
}

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function repoPath(relative: string): string {
  return fileURLToPath(new URL(`../../${relative}`, import.meta.url));
}

/**
 * Imports every transport module that exists, so a transport written later joins the matrix with
 * no change to any case.
 */
export async function loadTransports(entries: readonly TransportEntry[] = TRANSPORTS): Promise<TransportAvailability> {
  const result: TransportAvailability = { available: [], unavailable: [], broken: [] };
  for (const entry of entries) {
    const path = repoPath(entry.module);
    if (!existsSync(path)) {
      result.unavailable.push({ name: entry.name, reason: `${entry.module} does not exist yet` });
      continue;
    }
    try {
      const mod = (await import(path)) as Record<string, unknown>;
      const factory = mod[entry.exportName];
      if (typeof factory !== 'function') throw new Error(`${entry.module} does not export a function ${entry.exportName}`);
      result.available.push({ ...entry, factory: factory as TransportFactory });
    } catch (error) {
      result.broken.push({ name: entry.name, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return result;
}
