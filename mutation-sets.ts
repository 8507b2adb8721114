// The parts a mutation run is split into (docs/mutation-testing.md). Each set mutates some folders of src/
// against the in-process tests that reach them, and keeps its own committed report and incremental file
// under reports/mutation/<set>/, so a run of one set never discards another's results, and a night-long
// run can stop between sets and lose nothing. stryker.config.mjs reads MUTATION_SET to pick one;
// scripts/mutation.ts runs them in turn; scripts/mutation-scores.ts merges their reports into one table.

/** The tests that run the product in the test worker: unit tests and the in-process fake columns. */
const IN_PROCESS = [
  'src/**/*.test.ts',
  'packages/**/*.test.ts',
  'fakes/**/*.test.ts',
  'embedded/**/*.test.ts',
  'conformance/columns/*-fake-rest-http1.test.ts',
  'conformance/columns/*-fake-rest-h2c.test.ts',
  'conformance/columns/*-fake-grpc.test.ts',
  'test/**/*.test.ts',
];

/**
 * The in-process tests that start the gRPC executable: its own unit tests, its three fake columns, and the
 * tests that loop over every transport. No other file in src/ imports src/transports/grpc, so the
 * node:http and Koa columns and the other unit tests can never see a gRPC mutant; for a static mutant
 * (a module-level value, or code run in a file's beforeAll), which Stryker tests against every test of the
 * set, they were near half of each run (IN_PROCESS: 1,290 tests; GRPC: 729). Leaving a test out can only let a mutant
 * survive, never kill one.
 */
const GRPC = [
  'packages/one-port-grpc/**/*.test.ts',
  'src/transports/grpc/**/*.test.ts',
  'src/transports/http/server/timeouts.test.ts',
  'src/composition/**/*.test.ts',
  'test/grpc/**/*.test.ts',
  'test/observability/otlp-export.test.ts',
  'test/openapi/contract-client.test.ts',
  'conformance/grpc-contract.test.ts',
  'conformance/columns/grpc-fake-grpc.test.ts',
  'conformance/columns/grpc-fake-rest-http1.test.ts',
  'conformance/columns/grpc-fake-rest-h2c.test.ts',
];

export interface MutationSet {
  /** Globs of the files mutated (stryker.config.mjs adds: no test files, nothing generated). */
  readonly mutate: readonly string[];
  /** Globs of the test files run against them (vitest.mutation.config.ts). */
  readonly tests: readonly string[];
  /**
   * The set's tests talk to the real PostgreSQL, Redis and NATS named by POSTGRES_DSN, REDIS_ADDR and
   * NATS_URL (docs/real-backends.md), and the run refuses to start without them; otherwise the backend
   * variables are removed, as in npm test.
   */
  readonly realBackends?: boolean;
}

/**
 * name → the folders mutated (globs under src/, test files and src/gen excluded by stryker.config.mjs) and
 * the tests run against them (vitest.mutation.config.ts still excludes the spawning and real-backend files).
 */
export const SETS = {
  // Domain, sessions and services: their unit tests, the error table and DTOs they feed, the metrics fed
  // by the session scope, and one REST and one gRPC fake column (the service driven through a transport).
  // Small enough for CI (npm run mutation:ci).
  core: {
    mutate: ['src/domain/**/*.ts', 'src/session/**/*.ts', 'src/service/**/*.ts'],
    tests: [
      'src/domain/**/*.test.ts',
      'src/session/**/*.test.ts',
      'src/service/**/*.test.ts',
      'src/transports/errors/*.test.ts',
      'src/transports/http/rest/*.test.ts',
      'src/observability/metrics.test.ts',
      'src/config/rules.test.ts',
      'conformance/columns/stdlib-fake-rest-http1.test.ts',
      'conformance/columns/grpc-fake-grpc.test.ts',
    ],
  },
  // The gRPC executable, in two sets of a size one sitting can finish (the first whole-folder run did
  // ~9 mutants a minute at concurrency 2, with one in six a timeout): the in-process tests that start it
  // (GRPC), its one-port REST columns too. First packages/one-port-grpc: the one-port front, the unary
  // server and the HTTP/2 guard...
  'transports-grpc-wire': {
    mutate: ['packages/one-port-grpc/**/*.ts', '!packages/one-port-grpc/**/*.test.ts'],
    tests: GRPC,
  },
  // ...then the orders side: the transport, the handlers, health, the observer and the auth interceptor.
  'transports-grpc': {
    mutate: ['src/transports/grpc/**/*.ts'],
    tests: GRPC,
  },
  // The REST surface shared by the three executables, the error table and the transport contract...
  'transports-rest': {
    mutate: ['src/transports/http/rest/**/*.ts', 'src/transports/errors/**/*.ts', 'src/transports/transport.ts'],
    tests: IN_PROCESS,
  },
  // ...and the HTTP servers under it, the admin listener and the docs.
  'transports-http': {
    mutate: ['src/transports/http/server/**/*.ts', 'src/transports/http/admin/**/*.ts', 'src/transports/http/docs/**/*.ts'],
    tests: IN_PROCESS,
  },
  // The node:http and Koa executables' own code.
  'transports-servers': { mutate: ['src/transports/stdlib/**/*.ts', 'src/transports/koa/**/*.ts'], tests: IN_PROCESS },
  // The Postgres, Redis and NATS adapters, through their contract tests: against PGlite and private
  // servers, and against the real backends, where the drivers' behaviour lives; and the configuration
  // tests, which read each adapter's variables through its own reader (spec 8.1).
  adapters: {
    // The shared rate-limit store needs a real Redis: the rest-real set mutates it.
    mutate: ['src/adapters/**/*.ts', '!src/adapters/redis/rate-limit-store.ts'],
    tests: ['src/adapters/**/*.test.ts', 'test/contracts/*.test.ts', 'src/config/*.test.ts'],
    realBackends: true,
  },
  // Everything else: composition, config, lifecycle, observability, rate limiting, the CLI, the embedded ring.
  rest: {
    mutate: [
      'src/cli/**/*.ts',
      'src/composition/**/*.ts',
      'src/config/**/*.ts',
      'src/lifecycle/**/*.ts',
      'src/observability/**/*.ts',
      'src/ports/**/*.ts',
      'src/rate-limit/**/*.ts',
      'embedded/**/*.ts',
      // Reached only with the real backends: the rest-real set.
      '!src/composition/real-backends.ts',
      // Reached in both modes: the rest-real set, which runs its fake and its real tests.
      '!src/composition/main.ts',
    ],
    // IN_PROCESS without the gRPC executable's two one-port REST columns: they drive the REST surface through the
    // one-port server (the transports sets' business), and this set's code (composition, logs, metrics,
    // rate limits) through the same paths the node:http and Koa columns and the gRPC column take. Most of
    // this set runs while servers start (static mutants, each run against every test of the set): the two
    // columns were 18 s of its 65 s of tests.
    tests: [
      'src/**/*.test.ts',
      'fakes/**/*.test.ts',
      'embedded/**/*.test.ts',
      'conformance/columns/stdlib-fake-rest-http1.test.ts',
      'conformance/columns/koa-fake-rest-http1.test.ts',
      'conformance/columns/grpc-fake-grpc.test.ts',
      'test/**/*.test.ts',
    ],
  },
  // The two files of the rest that only the real backends reach (the rest set's tests run on the fakes, and
  // left there all 118 of their mutants were "no coverage"): the real adapters' composition and the Redis
  // rate-limit store, through the in-process node:http column on the real backends, their own tests and the
  // shared rate-limit tests. And main.ts, whose real-backend branch (no demo logins to announce) only
  // main.real.test.ts takes: its fake-backed tests run here too.
  'rest-real': {
    mutate: ['src/composition/real-backends.ts', 'src/adapters/redis/rate-limit-store.ts', 'src/composition/main.ts'],
    tests: [
      'conformance/columns/stdlib-real.test.ts',
      'src/composition/*.real.test.ts',
      'src/composition/main.test.ts',
      'test/rate-limit/*.real.test.ts',
      'src/config/*.test.ts',
    ],
    realBackends: true,
  },
} satisfies Readonly<Record<string, MutationSet>>;

/** The set MUTATION_SET names; undefined (with a clear error) when it names none. */
export function chosenSet(): (MutationSet & { readonly name: string }) | undefined {
  const name = process.env['MUTATION_SET'];
  if (name === undefined || name === '') return undefined;
  const set = (SETS as Readonly<Record<string, MutationSet | undefined>>)[name];
  if (set === undefined) throw new Error(`MUTATION_SET=${name} is not one of: ${Object.keys(SETS).join(', ')}`);
  return { name, ...set };
}
