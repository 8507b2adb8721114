#!/usr/bin/env node
// orders-koa: the REST API on Koa with @koa/router (spec 1, transport 2).
import { runMain } from '../src/composition/main.ts';
import { koaTransport } from '../src/transports/koa/app.ts';

process.exitCode = await runMain({ serviceName: 'orders-koa', transport: koaTransport, argv: process.argv.slice(2), env: process.env });
