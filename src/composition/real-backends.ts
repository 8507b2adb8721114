import type { Env } from '../config/env.ts';
import { ConfigError } from '../config/env.ts';
import type { Logger } from '../observability/logger.ts';
import type { Backends } from './backends.ts';

/** PostgreSQL, Redis and NATS adapters, each reading its own variables (spec 8.1). */
export async function createRealBackends(_env: Env, _logger: Logger): Promise<Backends> {
  throw new ConfigError('config: real backends are not wired yet; start with --embedded');
}
