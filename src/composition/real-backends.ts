import type { Env } from '../config/env.ts';
import { ConfigError } from '../config/env.ts';
import type { Logger } from '../observability/logger.ts';
import type { Backends } from './backends.ts';

/** Test isolation for real servers: own schema, cache key prefix and subject suffix. */
export interface RealBackendIsolation {
  readonly schema?: string;
  readonly uniqueSuffix?: string;
  readonly dropSchemaOnStop?: boolean;
}

/** PostgreSQL, Redis and NATS adapters, each reading its own variables (spec 8.1). */
export async function createRealBackends(_env: Env, _logger: Logger, _isolation: RealBackendIsolation = {}): Promise<Backends> {
  throw new ConfigError('config: real backends are not wired yet; start with --embedded');
}
