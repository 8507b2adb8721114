#!/usr/bin/env node
// orders-grpc: the ordersv1.Orders gRPC service and the REST API on one port (spec 1, transport 3; 4.4).
import { runMain } from '../src/composition/main.ts';
import { grpcTransport } from '../src/transports/grpc/grpc-transport.ts';

process.exitCode = await runMain({ serviceName: 'orders-grpc', transport: grpcTransport, argv: process.argv.slice(2), env: process.env });
