// Layer rules (the core imports no adapter), enforced by `npm run lint` (run by .ci/run).
// Every rule below was checked to fail on a deliberate violation before it was trusted.

/** Production code: what the image runs. Unit tests (*.test.ts) sit beside it but are not cruised. */
const PRODUCTION = '^(src|speed|packages|fakes|embedded|bin)/';
const CORE = '^src/(domain|service|ports|session)/';

/** Libraries that talk to the outside world (network, storage, telemetry export, logging). */
const DRIVERS = [
  'node_modules/(koa|@koa/|pg|ioredis|@nats-io/|@connectrpc/|@grpc/|prom-client|@opentelemetry/|pino)',
  '^(node:)?(http|http2|net)$',
];

module.exports = {
  forbidden: [
    {
      name: 'core-knows-no-transport-or-driver',
      comment:
        'src/domain, src/service, src/ports and src/session know ports only: they must not reach a transport, an adapter, the ' +
        'composition root, lifecycle/, observability/ (pino), config/, a fake or a driver library, not even through another module.',
      severity: 'error',
      from: { path: CORE },
      to: {
        path: ['^src/(transports|adapters|rate-limit|composition|lifecycle|observability|config)/', '^fakes/', ...DRIVERS],
        // The Component contract (spec 3.4) is a port that lives beside its runner; it imports nothing.
        pathNot: '^src/lifecycle/component\\.ts$',
        reachable: true,
      },
    },
    {
      name: 'domain-is-pure',
      comment: 'The domain depends on nothing but itself.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(?!domain/)' },
    },
    {
      name: 'domain-imports-no-package',
      comment: 'No npm package and no Node built-in in the domain: its rules are plain TypeScript.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown', 'core'] },
    },
    {
      name: 'adapters-do-not-know-transports',
      comment: 'An adapter implements a port; it is not a place for a service, an entry point or a transport.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: ['^src/transports/', '^src/composition/', '^src/(service|cli)/'] },
    },
    {
      name: 'src-loads-the-embedded-ring-once',
      comment:
        'The embedded ring (embedded/: simulator, console, demo users) is opt-in: src/ names it in one dynamic import, ' +
        'loadEmbeddedRing in composition/start-service.ts, made only with --embedded, and knows it otherwise through ' +
        'composition/embedded.ts. So src/ compiles and runs on real backends without embedded/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^embedded/', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'one-dynamic-import-of-the-embedded-ring',
      comment: 'The one place src/ loads the embedded ring: start-service.ts (loadEmbeddedRing), of its entry embedded/index.ts.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/composition/start-service\\.ts$' },
      to: { path: '^embedded/' },
    },
    {
      name: 'the-embedded-ring-is-a-ring',
      comment:
        'embedded/ builds on src/ and fakes/; nothing else of production (the fakes, the executables but orders-admin) ' +
        'reaches into it. orders-admin adds its `simulate` command (bin/orders-admin.ts).',
      severity: 'error',
      from: { path: '^(fakes|bin)/', pathNot: '^bin/orders-admin\\.ts$' },
      to: { path: '^embedded/' },
    },
    {
      name: 'cli-is-an-entry-point',
      comment: 'src/cli/ (orders-admin) is an entry point of its own: only bin/ and tests start it; the service never does.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'transports-do-not-know-adapters',
      comment:
        'Transports reach backends only through the core; composition wires adapters in. The Redis rate-limit store lives ' +
        'with the rest of rate limiting (src/rate-limit/) but is an adapter all the same: composition picks it, no transport does.',
      severity: 'error',
      from: { path: '^src/transports/' },
      to: { path: ['^src/adapters/', '^src/rate-limit/redis-', '^fakes/'] },
    },
    {
      name: 'rate-limit-knows-no-transport',
      comment:
        'src/rate-limit/ is the one place for rate limiting (spec 8): the budget contract, the in-process and Redis buckets, ' +
        'the client address and the framework-neutral HTTP step. Each transport adapts that step in its own folder ' +
        '(stdlib/middleware.ts, koa/middleware.ts); the shared part never reaches back into a transport or composition.',
      severity: 'error',
      from: { path: '^src/rate-limit/' },
      to: { path: ['^src/transports/', '^src/composition/'] },
    },
    {
      name: 'transports-do-not-know-composition',
      comment:
        'The composition root builds transports, never the reverse: what a transport is built from (Core, TransportFactory) ' +
        'is the transport-neutral src/transports/transport.ts.',
      severity: 'error',
      from: { path: '^src/transports/' },
      to: { path: '^src/composition/' },
    },
    {
      name: 'transports-are-independent',
      comment: 'Shared HTTP code lives in src/transports/http; one transport never imports another (one allowance, below).',
      severity: 'error',
      from: { path: '^src/transports/(stdlib|koa|grpc)/', pathNot: '^src/transports/grpc/grpc-transport\\.ts$' },
      to: { path: '^src/transports/(stdlib|koa|grpc)/', pathNot: '^src/transports/$1/' },
    },
    {
      name: 'grpc-mounts-only-the-stdlib-handler',
      comment:
        "The one cross-transport import, allowed on purpose: orders-grpc serves REST on its port with orders-stdlib's handler " +
        '(grpc/grpc-transport.ts imports stdlib/server.ts), the same REST variant as orders-stdlib rather than a third ' +
        '(rule SHAPE-login-empty-router-framework). Nothing else of stdlib, and nothing of koa.',
      severity: 'error',
      from: { path: '^src/transports/grpc/grpc-transport\\.ts$' },
      to: { path: '^src/transports/(stdlib|koa)/', pathNot: '^src/transports/stdlib/server\\.ts$' },
    },
    {
      name: 'grpc-knows-no-rest',
      comment:
        'The gRPC side reads nothing of the REST code (src/transports/http/rest/): what both need (the error table, the ' +
        "done signal's reason, the paging clamps) lives in src/transports/errors/ or the core. Its REST side is mounted " +
        "through orders-stdlib's handler, which builds the REST objects itself.",
      severity: 'error',
      from: { path: '^src/transports/grpc/' },
      to: { path: '^src/transports/http/rest/' },
    },
    {
      name: 'packages-know-no-service',
      comment:
        'packages/ holds generic libraries the service builds on (packages/one-port-grpc): they import nothing of the ' +
        'service or its verification code; what they need from it is passed in (options, callbacks).',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^(src|speed|embedded|fakes|bin|test|conformance|bench|scripts|spec|examples|explore)/' },
    },
    {
      name: 'packages-are-used-through-their-index',
      comment: "A package's private/ folder is its own: everyone else imports the package's index.ts.",
      severity: 'error',
      from: { pathNot: '^packages/' },
      to: { path: '^packages/[^/]+/private/' },
    },
    {
      name: 'core-knows-no-speed-ring',
      comment:
        'The speed ring (speed/) is opt-in: the core declares its hooks (src/composition/speed-hooks.ts) and one line of ' +
        'src/composition/main.ts switches it on for the executables. Nothing else in src/ may import it, so deleting that ' +
        'line leaves speed/ deletable and src/ whole.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/composition/main\\.ts$' },
      to: { path: '^speed/' },
    },
    {
      name: 'speed-ring-is-a-leaf',
      comment:
        'The speed ring builds on the core (speed/ may import src/); the other production folders never import it: an ' +
        'executable gets it only through src/composition/main.ts. Tests, the bench and the exploration may opt in.',
      severity: 'error',
      from: { path: '^(fakes|embedded|packages|bin)/' },
      to: { path: '^speed/' },
    },
    {
      name: 'production-never-imports-test-code',
      comment: 'What the image runs never loads the verification code (it is not shipped).',
      severity: 'error',
      from: { path: PRODUCTION },
      to: { path: '^(test|conformance|bench|scripts|spec)/' },
    },
    {
      name: 'not-to-dev-dep',
      comment: 'Production code never imports a devDependency: `npm ci --omit=dev` (the image) would not have it.',
      severity: 'error',
      from: { path: PRODUCTION },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'], pathNot: 'node_modules/@types/' },
    },
    {
      name: 'no-circular',
      comment: 'An import circle, anywhere (production or verification code): split the shared part out.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Test files are leaves (nothing imports them), so leaving them out hides no circle.
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
