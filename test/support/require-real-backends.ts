import { BACKEND_VARIABLES, realBackendsConfigured } from './in-process-app.ts';

/**
 * The real-backend suite (vitest.config.ts, project `real`) runs against the servers these variables
 * name and refuses to start without them: a real suite that skips itself would pass on any machine.
 */
export default function requireRealBackends(): void {
  if (!realBackendsConfigured(process.env)) {
    const missing = BACKEND_VARIABLES.filter((name) => (process.env[name] ?? '') === '');
    throw new Error(
      `the real-backend suite needs ${missing.join(', ')} (docs/real-backends.md; npm run test:containers starts them in containers)`,
    );
  }
}
