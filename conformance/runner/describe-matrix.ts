import { afterAll, describe, test } from 'vitest';
import { caseApis, type Case, type Observation, type ProcessCase } from '../case-model.ts';
import { ALL_CASES } from '../cases/index.ts';
import type { Driver, DriverName } from '../drivers/driver.ts';
import { createDriver } from '../drivers/drivers.ts';
import { findKnownFailing, loadKnownFailing } from './known-failing.ts';
import { buildMatrix, filtersFromEnv, sliceFilters, type MatrixSlice, type TargetGroup } from './matrix.ts';
import { columnId, resultsPathOf, writeResults, type CaseResult, type Column } from './results.ts';
import { runFlowCase, runProcessCase, runRequestCase, type RunEnv } from './run-case.ts';
import { SimulatorClient } from '../targets/simulator-client.ts';
import { ControlClient, LogFollower } from '../targets/control-client.ts';
import { OtlpReceiver } from '../targets/otlp-receiver.ts';
import {
  capabilitiesOf as backendCapabilities,
  externalTarget,
  startExternalTarget,
  startInProcessTarget,
  startLaunchedTarget,
  startSpawnedTarget,
  type Capability,
  type ExternalOffers,
  type Target,
} from '../targets/target.ts';
import { TEST_HANG_GUARD_MS } from '../../test/support/eventually.ts';
import { TRANSPORTS } from '../../test/support/transports.ts';

/** The runner's OTLP receiver for an external instance, on `host:port` (--otlp-listen), or none. */
async function startReceiver(listen: string | undefined): Promise<OtlpReceiver | undefined> {
  if (listen === undefined) return undefined;
  const at = listen.lastIndexOf(':');
  return OtlpReceiver.start(at <= 0 ? '0.0.0.0' : listen.slice(0, at), Number(listen.slice(at + 1)));
}

/**
 * The conformance matrix, one slice per test file (conformance/columns/*.test.ts): every transport ×
 * driver × backend of the slice that the CONFORMANCE_* filters allow runs every case that applies.
 * Slices are separate files so that vitest spreads the columns over its workers; each target is the
 * file's own (port 0), so files share nothing. Test names are RULE/transport/driver/backend/case.
 * Each file writes its results to reports/conformance-results/<slice>.json; the report merges them.
 */
export async function describeMatrix(slice: MatrixSlice): Promise<void> {
  const startedAt = new Date().toISOString();
  const filters = sliceFilters(filtersFromEnv(), slice);
  const matrix = buildMatrix(filters, TRANSPORTS);
  const knownFailing = loadKnownFailing();
  const results: CaseResult[] = [];
  const columns: Column[] = [];
  for (const note of matrix.notes) console.log(note);
  // An external instance offers the simulator and the test-control API only when it runs --embedded:
  // asked once, before the cases are listed. Its spans come to the runner's receiver when --otlp-listen is given.
  const externalAdmin = filters.external?.adminUrl?.replace(/\/$/, '');
  const offers: ExternalOffers = {
    simulator: externalAdmin !== undefined && (await SimulatorClient.offeredBy(externalAdmin)),
    control: externalAdmin !== undefined && (await ControlClient.offeredBy(externalAdmin)),
    logs: externalAdmin !== undefined && (await LogFollower.offeredBy(new ControlClient(externalAdmin))),
    receiver: await startReceiver(filters.external?.otlpListen),
  };
  if (filters.external !== undefined)
    console.log(
      `conformance: external target ${offers.simulator === true ? 'offers' : 'does not offer'} the simulator, ${offers.control === true ? 'offers' : 'does not offer'} the test-control API; ${offers.receiver === undefined ? 'no OTLP receiver (--otlp-listen)' : `OTLP receiver on ${offers.receiver.endpoint}: start the instance with OTLP_ENDPOINT=<this host>:${offers.receiver.endpoint.split(':').pop()}`}`,
    );
  afterAll(async () => {
    await offers.receiver?.stop();
  });

  // A guard against hangs only: every wait of a case is for a condition.
  const CASE_TIMEOUT_MS = TEST_HANG_GUARD_MS;

  function testId(c: Case, column: Column): string {
    return `${c.rules.join('+')}/${column.transport}/${column.driver}/${column.backend}/${c.name}`;
  }

  /** Runs one case body and applies the known-failing list: a listed case must fail, an unlisted one must pass. */
  async function settle(c: Case, column: Column, body: () => Promise<void>): Promise<void> {
    const id = testId(c, column);
    const started = performance.now();
    const failure = await body().then(
      () => undefined,
      (error: unknown) => error,
    );
    const known = findKnownFailing(knownFailing, { rules: c.rules, ...column, case: c.name });
    const ms = Math.round(performance.now() - started);
    const base = { id, rules: c.rules, ...column, case: c.name, ms };
    const message = failure instanceof Error ? failure.message : String(failure);
    if (known !== undefined) {
      if (failure === undefined) {
        results.push({ ...base, outcome: 'xpass', detail: `listed in known-failing.yaml (${known.reason}) but passes` });
        throw new Error(
          `[${c.rules.join(', ')}] ${c.name}: listed in conformance/known-failing.yaml (${known.reason}) but passes: remove the entry`,
        );
      }
      results.push({ ...base, outcome: 'xfail', detail: `${known.reason}: ${message}` });
      return;
    }
    if (failure !== undefined) {
      results.push({ ...base, outcome: 'fail', detail: message });
      const error = new Error(`[${c.rules.join(', ')}] ${c.name} on ${columnId(column)}: ${message}`);
      if (failure instanceof Error && failure.stack !== undefined)
        error.stack = `${error.message}\n${failure.stack.split('\n').slice(1).join('\n')}`;
      throw error;
    }
    results.push({ ...base, outcome: 'pass' });
  }

  function skip(c: Case, column: Column, reason: string): void {
    results.push({ id: testId(c, column), rules: c.rules, ...column, case: c.name, outcome: 'skip', ms: 0, detail: reason });
    test.skip(`${testId(c, column)} (${reason})`, () => undefined);
  }

  function missingCapabilities(c: Case, capabilities: ReadonlySet<Capability>): Capability[] {
    const needed = new Set<Capability>(c.needs ?? []);
    if (c.target !== undefined) needed.add('settings');
    // A shorter linger or a smaller cap where the target takes one (constants); elsewhere spec 8's own,
    // reached through the simulated clock (the linger) and tokens minted for many users (the cap).
    if (c.target?.sessionLingerMs !== undefined) needed.add(capabilities.has('constants') ? 'constants' : 'faults');
    if (c.target?.sessionCap !== undefined) needed.add(capabilities.has('constants') ? 'constants' : 'secret');
    return [...needed].filter((cap) => !capabilities.has(cap));
  }

  function appliesTo(c: Case, transport: string, backend: string): boolean {
    return (c.transports === undefined || c.transports.includes(transport)) && (c.backends === undefined || c.backends.includes(backend));
  }

  /** What the case checks is the listener's or this wire's own, not the request handler's. */
  function listenerCase(c: Case): boolean {
    return c.connection === true || c.transports !== undefined || c.drivers !== undefined || c.last === true;
  }

  /**
   * Why a case is left to other columns on this one. A fake column of a transport whose REST handler is
   * another's (Transport.restHandlerOf) runs the handler's cases where that handler is the transport's own:
   * - its rest-http1 column (the same handler behind the same HTTP/1.1 server) runs only what its own
   *   listener does (listenerCase);
   * - its rest-h2c column (the same handler through node:http2) runs what its listener does and one case
   *   of every other rule (`ruleCovered`: the case's rules are all checked by a case it runs), so every rule
   *   row keeps its rest-h2c cell; the handler's other cases run on its own column, and every case runs on
   *   the real and spawned rest-h2c columns (npm run test:real, npm run conformance:report).
   */
  function handlerElsewhere(c: Case, group: TargetGroup, driverName: DriverName, ruleCovered: boolean): string | undefined {
    const of = group.transport?.restHandlerOf;
    if (of === undefined || group.backend !== 'fake' || listenerCase(c)) return undefined;
    if (driverName === 'rest-http1')
      return `the request is answered by orders-${of}'s REST handler: run on ${of}/rest-http1/fake (the same handler and HTTP/1.1 server) and on ${group.transportName}/rest-h2c/fake (the same handler)`;
    if (driverName === 'rest-h2c' && ruleCovered)
      return `its rules are checked on this column by another case; the request is answered by orders-${of}'s REST handler, whose every case runs on ${of}/rest-http1/fake, and every case runs on ${group.transportName}/rest-h2c real and spawned`;
    return undefined;
  }

  /** Cases marked `last` check what the whole column observed, so they run after the others. */
  function ordered(cases: readonly Case[]): Case[] {
    return [...cases.filter((c) => !c.last), ...cases.filter((c) => c.last)];
  }

  function describeGroup(group: TargetGroup): void {
    describe(`${group.transportName}/${group.backend}`, () => {
      let shared: Promise<Target> | undefined;
      const start = (settings: Case['target']): Promise<Target> =>
        group.backend === 'external' || group.transport === undefined
          ? settings !== undefined && filters.external?.launch !== undefined
            ? startLaunchedTarget(filters.external.launch, settings)
            : startExternalTarget(filters.external!, offers)
          : group.backend === 'spawned'
            ? startSpawnedTarget(group.transport, settings)
            : startInProcessTarget(group.transport, group.backend, settings);
      const sharedTarget = (): Promise<Target> => (shared ??= start(undefined));
      const capabilities =
        group.backend === 'external' ? externalTarget(filters.external!, offers).capabilities : backendCapabilities(group.backend);
      const restVariant = group.transport?.restVariant ?? filters.external?.restVariant;

      afterAll(async () => {
        if (shared !== undefined) await (await shared).stop();
      });

      for (const driverName of group.drivers) {
        const column: Column = { transport: group.transportName, driver: driverName, backend: group.backend };
        columns.push(column);
        const observations: Observation[] = [];
        const drivers = new Map<string, Driver>();
        const driverFor = (target: Target, name: DriverName): Driver => {
          const key = `${target.baseUrl}|${name}`;
          let driver = drivers.get(key);
          if (driver === undefined) {
            driver = createDriver(name, {
              baseUrl: target.baseUrl,
              adminUrl: target.adminUrl,
              hooks: target.hooks,
              observe:
                name === driverName
                  ? (req, reply) =>
                      observations.push({ method: req.method, path: req.path.split('?')[0] ?? req.path, status: reply.status ?? 0 })
                  : undefined,
              // The instance by URL, not one launched for a case's settings (whose rate limit the case checks).
              retryRateLimited: target.shared === true,
            });
            drivers.set(key, driver);
          }
          return driver;
        };

        describe(driverName, () => {
          afterAll(async () => {
            await Promise.all([...drivers.values()].map((d) => d.close()));
          });
          const api = driverName === 'grpc' ? 'grpc' : 'rest';
          const cases = ordered(ALL_CASES).filter(
            (c): c is Exclude<Case, ProcessCase> =>
              c.kind !== 'process' &&
              caseApis(c).includes(api) &&
              appliesTo(c, group.transportName, group.backend) &&
              (c.drivers === undefined || c.drivers.includes(driverName)),
          );
          // The rules the column's listener cases check, then each case's in turn: a case adding none is covered.
          const checked = new Set(cases.filter(listenerCase).flatMap((c) => c.rules));
          for (const c of cases) {
            const ruleCovered = listenerCase(c) || c.rules.every((rule) => checked.has(rule));
            const elsewhere = handlerElsewhere(c, group, driverName, ruleCovered);
            if (elsewhere !== undefined) {
              skip(c, column, elsewhere);
              continue;
            }
            const missing = missingCapabilities(c, capabilities);
            if (missing.length > 0) {
              skip(c, column, `needs ${missing.join(', ')}`);
              continue;
            }
            if (c.kind === 'request' && c.expect.variants !== undefined && api === 'rest' && restVariant === undefined) {
              skip(c, column, 'expectation depends on the REST variant (--rest-variant)');
              continue;
            }
            c.rules.forEach((rule) => checked.add(rule));
            test(
              testId(c, column),
              () =>
                settle(c, column, async () => {
                  const own = c.target !== undefined;
                  const target = own ? await start(c.target) : await sharedTarget();
                  try {
                    const env: RunEnv = {
                      target,
                      driver: driverFor(target, driverName),
                      via: (name) => driverFor(target, name),
                      transport: { name: group.transportName, restVariant },
                      observed: () => observations,
                    };
                    if (c.kind === 'request') await runRequestCase(c, env);
                    else await runFlowCase(c, env);
                  } finally {
                    if (own) {
                      await Promise.all(
                        [...drivers.entries()]
                          .filter(([key]) => key.startsWith(`${target.baseUrl}|`))
                          .map(([key, d]) => (drivers.delete(key), d.close())),
                      );
                      await target.stop();
                    }
                  }
                }),
              Math.max(c.timeoutMs ?? 0, CASE_TIMEOUT_MS),
            );
          }
        });
      }

      if (group.processColumn && group.transport !== undefined) {
        const transport = group.transport;
        const column: Column = { transport: group.transportName, driver: 'process', backend: group.backend };
        columns.push(column);
        describe('process', () => {
          for (const c of ALL_CASES) {
            if (c.kind !== 'process' || !appliesTo(c, group.transportName, group.backend)) continue;
            test(testId(c, column), () => settle(c, column, () => runProcessCase(c, transport)), CASE_TIMEOUT_MS);
          }
        });
      }
    });
  }

  for (const group of matrix.groups) describeGroup(group);
  // A file whose slice the filters leave empty still holds a test (vitest fails a file without one).
  if (matrix.groups.length === 0)
    test.skip(`${slice.name}: no column of this slice is selected${matrix.notes.length > 0 ? ` (${matrix.notes.join('; ')})` : ''}`, () =>
      undefined);

  afterAll(() => {
    if (columns.length === 0 && matrix.notes.length === 0) return;
    writeResults(
      {
        startedAt,
        finishedAt: new Date().toISOString(),
        filters: Object.fromEntries(
          Object.entries(process.env).filter(
            ([k, v]) => k.startsWith('CONFORMANCE_') && k !== 'CONFORMANCE_JWT_SECRET' && v !== undefined,
          ) as [string, string][],
        ),
        columns,
        notes: matrix.notes,
        results,
      },
      resultsPathOf(slice.name),
    );
    if (filters.external !== undefined) {
      const byReason = new Map<string, Set<string>>();
      for (const r of results.filter((x) => x.outcome === 'skip'))
        byReason.set(r.detail ?? '', (byReason.get(r.detail ?? '') ?? new Set()).add(r.case));
      for (const [reason, names] of byReason)
        console.log(`conformance: skipped on the external target (${reason}): ${[...names].join(', ')}`);
    }
    const failed = results.filter((r) => r.outcome === 'fail' || r.outcome === 'xpass').length;
    console.log(
      `conformance: ${results.length} results in ${columns.length} columns, ${failed} failing; reports/conformance-results/${slice.name}.json written`,
    );
  });
}
