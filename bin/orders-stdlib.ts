#!/usr/bin/env node
// orders-stdlib: the REST API on node:http with a small router (spec 1, transport 1).
import { runMain } from '../src/composition/main.ts';
import { stdlibTransport } from '../src/transports/stdlib/server.ts';

process.exitCode = await runMain({
  serviceName: 'orders-stdlib',
  transport: stdlibTransport,
  argv: process.argv.slice(2),
  env: process.env,
});
