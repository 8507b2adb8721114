// Layer rules (STYLE.md: the core imports no adapter), checked by `npm run lint:arch` in CI.
const DRIVERS = [
  'node_modules/(koa|@koa/|koa-ratelimit|pg|ioredis|@nats-io/|@connectrpc/|@grpc/|prom-client|@opentelemetry/)',
  '^(node:)?(http|http2|net)$',
];

module.exports = {
  forbidden: [
    {
      name: 'core-knows-no-transport-or-driver',
      comment: 'src/domain, src/service, src/ports and src/session know ports only: no HTTP, gRPC, Koa, pg, ioredis, NATS.',
      severity: 'error',
      from: { path: '^src/(domain|service|ports|session)/' },
      to: { path: ['^src/(transports|adapters|composition)/', '^fakes/', ...DRIVERS] },
    },
    {
      name: 'domain-is-pure',
      comment: 'The domain depends on nothing but itself.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(?!domain/)' },
    },
    {
      name: 'adapters-do-not-know-transports',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: ['^src/transports/', '^src/composition/'] },
    },
    {
      name: 'transports-do-not-know-adapters',
      comment: 'Transports reach backends only through the core; composition wires adapters in.',
      severity: 'error',
      from: { path: '^src/transports/' },
      to: { path: ['^src/adapters/', '^fakes/'] },
    },
    {
      name: 'transports-are-independent',
      comment: 'Shared HTTP code lives in src/transports/http; one transport never imports another (gRPC mounts the Koa app by design).',
      severity: 'error',
      from: { path: '^src/transports/(stdlib|koa)/' },
      to: { path: '^src/transports/(stdlib|koa|grpc)/', pathNot: '^src/transports/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
