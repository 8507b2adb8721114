/**
 * orders-admin (bin/orders-admin.ts), the operator's command line: database migrations and users (rule
 * AUTH-10-credentials: the service never creates a user), and `simulate` (simulate-cli.ts). Secrets never
 * reach argv or the output (rule CONFIG-no-secret-echo).
 */
import { randomUUID } from 'node:crypto';
import { text } from 'node:stream/consumers';
import { ConfigError, type Env } from '../config/env.ts';
import { ErrConflict, ErrUnavailable } from '../domain/errors.ts';
import { createLogger } from '../observability/logger.ts';
import { hashPassword } from '../service/password-hasher.ts';
import { PostgresCredentialStore } from '../adapters/postgres/credential-store.ts';
import { PostgresDatabase } from '../adapters/postgres/database.ts';
import { postgresConfigFromEnv } from '../adapters/postgres/config.ts';

export interface AdminCliIo {
  readonly env: Env;
  /** The password arrives here, never in argv (argv is visible to every user via ps). */
  readonly stdin: AsyncIterable<string | Uint8Array>;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/**
 * A command another part of the repo adds to orders-admin: the embedded ring's `simulate`
 * (embedded/simulate-cli.ts), which bin/orders-admin.ts passes in.
 */
export interface AdminCommand {
  readonly name: string;
  /** Its lines in the usage, after the commands of this file, and in its environment section. */
  readonly usage: string;
  readonly environment: string;
  run(args: readonly string[], io: AdminCliIo): Promise<number>;
}

/** The usage, with the lines of the commands added. */
export function usage(extra: readonly AdminCommand[] = []): string {
  return `usage:
  orders-admin migrate                 apply pending database migrations
  orders-admin users add <username>    add a user; the password is read from stdin
                                       (one trailing newline is dropped), e.g.
                                       printf '%s' "$PASSWORD" | orders-admin users add alice
                                       an existing user is left as it is (exit 0)
  orders-admin users set-password <username>
                                       replace an existing user's password (read from stdin)
${extra.map((command) => command.usage).join('')}environment:
  POSTGRES_DSN     required (migrate, users): postgres://user:password@host:port/database
  POSTGRES_SCHEMA  optional: schema holding the tables (default: the server's search_path)
${extra.map((command) => command.environment).join('')}exit codes: 0 done, 1 failed, 2 bad arguments
`;
}

/** The usage of this file's own commands. */
export const USAGE = usage();

type Command = { kind: 'migrate' } | { kind: 'add-user' | 'set-password'; username: string } | { kind: 'help' };

function parse(argv: readonly string[]): Command | string {
  const [first, second, third, ...rest] = argv;
  if (argv.length === 1 && (first === '-h' || first === '--help' || first === 'help')) return { kind: 'help' };
  if (first === 'migrate' && argv.length === 1) return { kind: 'migrate' };
  if (first === 'users' && (second === 'add' || second === 'set-password') && third !== undefined && rest.length === 0) {
    if (third === '' || third.trim() !== third) return 'username must be non-empty, without surrounding whitespace';
    return { kind: second === 'add' ? 'add-user' : 'set-password', username: third };
  }
  return argv.length === 0 ? 'missing command' : `unknown arguments: ${argv.join(' ')}`;
}

/** The operator CLI behind bin/orders-admin.ts, with the commands `extra` adds; returns the exit code. */
export async function runAdminCli(argv: readonly string[], io: AdminCliIo, extra: readonly AdminCommand[] = []): Promise<number> {
  const added = extra.find((candidate) => candidate.name === argv[0]);
  if (added !== undefined) return added.run(argv.slice(1), io);
  const command = parse(argv);
  if (typeof command === 'string') {
    io.stderr.write(`orders-admin: ${command}\n${usage(extra)}`);
    return 2;
  }
  if (command.kind === 'help') {
    io.stdout.write(usage(extra));
    return 0;
  }
  let db: PostgresDatabase | undefined;
  try {
    const config = postgresConfigFromEnv(io.env);
    db = new PostgresDatabase(config, createLogger('warn', { write: (line: string) => void io.stderr.write(line) }));
    if (command.kind === 'migrate') {
      const applied = await db.migrate();
      io.stdout.write(applied.length === 0 ? 'no pending migrations\n' : applied.map((v) => `applied migration ${v}\n`).join(''));
      return 0;
    }
    // One trailing newline is the shell's, not the password's.
    const password = (await text(io.stdin)).replace(/\r?\n$/, '');
    if (password === '') {
      io.stderr.write('orders-admin: password must not be empty (read from stdin)\n');
      return 1;
    }
    const passwordHash = await hashPassword(password);
    await db.init();
    const store = new PostgresCredentialStore(db);
    if (command.kind === 'set-password') {
      if (!(await store.setPasswordHash(command.username, passwordHash))) {
        io.stderr.write(`orders-admin: no user ${command.username} (add it: orders-admin users add ${command.username})\n`);
        return 1;
      }
      io.stdout.write(`password of user ${command.username} replaced\n`);
      return 0;
    }
    const user = { id: randomUUID(), username: command.username, passwordHash };
    try {
      await store.add(user);
    } catch (error) {
      // Only the insert's conflict is an existing user (a conflict while migrating at init is not).
      if (!(error instanceof ErrConflict)) throw error;
      // Re-running a set-up script must not fail on a user it already made; the password is not touched.
      io.stdout.write(
        `user ${command.username} already exists; left unchanged (to replace its password: orders-admin users set-password ${command.username})\n`,
      );
      return 0;
    }
    io.stdout.write(`user ${user.username} added with id ${user.id}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof ErrUnavailable) {
      io.stderr.write(`orders-admin: ${error.message}\n`);
    } else {
      // Our own errors are secret-free; an unknown one is reported by type only.
      io.stderr.write(`orders-admin: unexpected ${error instanceof Error ? error.name : 'error'}\n`);
    }
    return 1;
  } finally {
    await db?.stop();
  }
}
