import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { REPO_ROOT } from './transports.ts';

/**
 * PGlite for the hermetic suite: one per test worker, shared by the files that worker runs, each file on
 * a clean database (the schemas it made are dropped when it is done). The checks that need it are one
 * file, src/adapters/postgres/pglite.test.ts, so one worker boots it: a check put in a file of its own
 * would cost a second boot whenever another worker runs that file.
 *
 * A fresh PGlite runs initdb, about 2 s of CPU and most of its start; a worker then compiles the WASM once,
 * about another second. So the data directory right after initdb is made once per installed PGlite version
 * and kept beside node_modules' other caches (npm ci renews it), every boot loads it instead of running
 * initdb, and a worker boots one PGlite for all its files. Measured: a boot from the kept directory takes
 * ~0.9 s of CPU in a fresh process against ~3.2 s with initdb.
 */

const VERSION = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;
const DATA_DIR_TAR = join(REPO_ROOT, 'node_modules', '.cache', 'pglite', `datadir-${VERSION}.tar`);

/** The data directory after initdb: made here (and kept) when absent; two suites at once may both make it. */
async function initialDataDir(): Promise<Blob> {
  if (existsSync(DATA_DIR_TAR)) return new Blob([readFileSync(DATA_DIR_TAR)]);
  const fresh = await PGlite.create();
  try {
    const tar = Buffer.from(await (await fresh.dumpDataDir('none')).arrayBuffer());
    mkdirSync(join(DATA_DIR_TAR, '..'), { recursive: true });
    // Written aside and renamed: a reader never sees half a file.
    const partial = `${DATA_DIR_TAR}.${process.pid}.partial`;
    writeFileSync(partial, tar);
    renameSync(partial, DATA_DIR_TAR);
    return new Blob([tar]);
  } finally {
    await fresh.close();
  }
}

let worker: Promise<PGlite> | undefined;

/** This worker's PGlite, booted on first use and kept until the worker exits. */
function workerPglite(): Promise<PGlite> {
  worker ??= initialDataDir().then((loadDataDir) => PGlite.create({ loadDataDir }));
  return worker;
}

/** One file's use of its worker's PGlite. */
export interface PgliteLease {
  readonly db: PGlite;
  /** `postgres://…@host:port/postgres` of a pglite-socket server in front of it, for the unmodified pg client. */
  readonly dsn: string;
  readonly server: PGLiteSocketServer;
  /** Stops the socket server and leaves the database as it was found: schemas made since are dropped, session settings reset. */
  release(): Promise<void>;
}

async function schemaNames(db: PGlite): Promise<Set<string>> {
  return new Set((await db.query<{ name: string }>('SELECT nspname AS name FROM pg_namespace')).rows.map((r) => r.name));
}

/**
 * The worker's PGlite behind a pglite-socket server of its own. Every socket connection shares PGlite's
 * single session: an advisory lock is re-entrant there (see migrations.ts), SET search_path is
 * session-wide (one schema in use at a time), and statements go unnamed (one prepared on a connection
 * would clash on the next). A file leases it in beforeAll and releases it in afterAll.
 */
export async function leasePglite(maxConnections: number): Promise<PgliteLease> {
  const db = await workerPglite();
  const before = await schemaNames(db);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  await server.start();
  return {
    db,
    server,
    dsn: `postgres://postgres:pglite-pw@${server.getServerConn()}/postgres`,
    async release() {
      await server.stop();
      for (const schema of await schemaNames(db)) if (!before.has(schema)) await db.exec(`DROP SCHEMA "${schema}" CASCADE`);
      await db.exec('RESET ALL; SELECT pg_advisory_unlock_all();');
    },
  };
}
