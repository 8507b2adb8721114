#!/usr/bin/env node
// Operator CLI: migrations and user creation (logic and usage in src/cli/admin-cli.ts), and `simulate`, which
// drives an --embedded service's simulator (the embedded ring's, embedded/simulate-cli.ts).
import { runAdminCli } from '../src/cli/admin-cli.ts';
import { SIMULATE } from '../embedded/simulate-cli.ts';
const { env, stdin, stdout, stderr } = process;
process.exitCode = await runAdminCli(process.argv.slice(2), { env, stdin, stdout, stderr }, [SIMULATE]);
