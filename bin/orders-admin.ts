#!/usr/bin/env node
// Operator CLI: migrations and user creation (logic and usage in src/cli/admin-cli.ts).
import { runAdminCli } from '../src/cli/admin-cli.ts';
const { env, stdin, stdout, stderr } = process;
process.exitCode = await runAdminCli(process.argv.slice(2), { env, stdin, stdout, stderr });
