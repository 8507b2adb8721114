#!/usr/bin/env node
// Runs the conformance matrix (conformance/columns/*.test.ts, one file per slice) through vitest, with filters:
//   npm run conformance -- --transport stdlib --backend fake [--driver rest-http1]
//   npm run conformance -- --url http://host:8080 --admin-url http://host:8081 [--otlp-listen 0.0.0.0:4318] [--driver grpc]
//   npm run conformance -- --backend fake --speed on     the in-process targets with the speed ring (speed/)
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { findUnitCases } from '../conformance/unit-rules.ts';
import { RESULTS_DIR, UNIT_RESULTS_PATH } from '../conformance/runner/results.ts';
import { realBackendsConfigured } from '../test/support/in-process-app.ts';
import { runCommand } from './run-command.ts';

export const USAGE = `usage: npm run conformance -- [--transport stdlib,koa,grpc,core] [--backend fake,real,spawned] [--driver rest-http1,rest-h2c,grpc,process,unit] [--speed on|off]
       npm run conformance -- --url http://host:8080 [--admin-url http://host:8081] [--user name:password ...]
         [--driver rest-http1,rest-h2c,grpc] [--rest-variant stdlib-router|router-framework] [--otlp-listen host:port]
         [--launch "launcher.ts arg…"]   (a case with settings gets an instance of its own from the launcher)`;

const VITEST = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

/**
 * The command line as CONFORMANCE_* variables, which the test file reads (vitest takes no custom flags);
 * the usage line and exit code 2 when the command line is wrong.
 */
export function conformanceEnvOrExit(argv: readonly string[], usage = USAGE): Record<string, string> {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        transport: { type: 'string', multiple: true },
        backend: { type: 'string', multiple: true },
        driver: { type: 'string', multiple: true },
        url: { type: 'string' },
        'admin-url': { type: 'string' },
        user: { type: 'string', multiple: true },
        'rest-variant': { type: 'string' },
        'otlp-listen': { type: 'string' },
        launch: { type: 'string' },
        'no-run': { type: 'boolean' },
        // In-process targets run the plain core unless the speed ring is asked for; executables always run with it.
        speed: { type: 'string' },
      },
      strict: true,
    });
    // Each option as its variable; a repeated one joined with commas.
    const names = {
      transport: 'TRANSPORT',
      backend: 'BACKEND',
      driver: 'DRIVER',
      url: 'URL',
      'admin-url': 'ADMIN_URL',
      user: 'USERS',
      'rest-variant': 'REST_VARIANT',
      'otlp-listen': 'OTLP_LISTEN',
      launch: 'LAUNCH',
      speed: 'SPEED',
    } as const;
    const env: Record<string, string> = {};
    for (const [option, name] of Object.entries(names)) {
      const value = [values[option as keyof typeof names] ?? []].flat().join(',');
      if (value !== '') env[`CONFORMANCE_${name}`] = value;
    }
    if (values['admin-url'] !== undefined && values.url === undefined) throw new Error('--admin-url needs --url');
    if (values['otlp-listen'] !== undefined && values.url === undefined) throw new Error('--otlp-listen needs --url');
    if (values.launch !== undefined && values.url === undefined) throw new Error('--launch needs --url');
    if (values.speed !== undefined && values.speed !== 'on' && values.speed !== 'off') throw new Error('--speed takes on or off');
    return env;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    process.exit(2);
  }
}

/** Runs vitest on the matrix with these variables; resolves with its exit code. */
export function runConformance(env: Record<string, string>): Promise<number> {
  if (!existsSync(VITEST)) throw new Error(`vitest not found at ${VITEST}: run npm ci`);
  // Filters of an earlier shell must not leak into this run: only the given ones apply.
  // CONFORMANCE_JWT_SECRET is no filter: the caller's share of an external instance's secret, kept.
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('CONFORMANCE_') || k === 'CONFORMANCE_JWT_SECRET'),
  );
  // The core column: rule-tagged unit tests (conformance/unit-rules.ts), run with the matrix and
  // reported per rule from vitest's JSON output. Not against an external instance.
  const transports = env['CONFORMANCE_TRANSPORT']?.split(',');
  const drivers = env['CONFORMANCE_DRIVER']?.split(',');
  const core = env['CONFORMANCE_URL'] === undefined && (transports?.includes('core') ?? true) && (drivers?.includes('unit') ?? true);
  const unitFiles = core ? [...new Set(findUnitCases().map((u) => u.file))] : [];
  rmSync(UNIT_RESULTS_PATH, { force: true });
  // Only this run's slices make the report: earlier results are removed first.
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  const reporters = core
    ? ['--reporter=default', '--reporter=./test/support/summary-reporter.ts', '--reporter=json', `--outputFile.json=${UNIT_RESULTS_PATH}`]
    : [];
  // The real column's slices belong to the real-backend project (vitest.config.ts), which requires the
  // backend variables: it runs when they are set and the filters allow the real backend.
  const backends = env['CONFORMANCE_BACKEND']?.split(',');
  const real = env['CONFORMANCE_URL'] === undefined && (backends?.includes('real') ?? true) && realBackendsConfigured(process.env);
  const projects = ['--project', 'fast', ...(real ? ['--project', 'real'] : [])];
  return runCommand(process.execPath, [VITEST, 'run', ...projects, 'conformance/columns/', ...unitFiles, ...reporters], {
    env: { ...base, ...env },
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await runConformance(conformanceEnvOrExit(process.argv.slice(2)));
}
