#!/usr/bin/env node
/**
 * The outside judges of openapi/openapi.yaml (rule OPENAPI-exact), `npm run contract:judges`:
 *   1. Spectral, the spectral:oas ruleset (tools/contract/spectral.yaml): no error.
 *   2. Redocly, the recommended ruleset (@redocly/openapi-core, already a devDependency): no error.
 *   3. Prism's validation proxy in front of an `--embedded` orders-grpc, with the conformance suite run through
 *      it (`npm run conformance -- --url … --driver rest-http1`): no response violation, and every request
 *      violation one the suite sends on purpose, listed in conformance/out-of-contract.yaml.
 * Spectral and Prism are not devDependencies (their ~125 MB would weigh on every `npm ci`): they come from
 * tools/contract's own lockfile, installed there by `npm ci` on first use, pinned like the rest.
 *
 * Prism runs without --errors: with it, Prism answers a request violation itself (a 401 or 422 problem+json)
 * instead of forwarding it, so the suite's deliberate bad requests would test Prism, not the service. Without
 * it every request reaches the service and Prism reports what it found in each response's `sl-violations`
 * field; a small recording proxy in front of Prism (written here, node:http) reads that field per exchange,
 * so each violation is tied to its request even when requests overlap. The suite's own verdict through two
 * proxies is printed but not judged: framing, timeout and connection cases measure the listener, and here the
 * listener is Prism's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createConfig, lint } from '@redocly/openapi-core';
import { parse } from 'yaml';
import { runCommand } from './run-command.ts';

const ROOT = join(import.meta.dirname, '..');
const DOCUMENT = join(ROOT, 'openapi', 'openapi.yaml');
const TOOLS = join(ROOT, 'tools', 'contract');
const BIN = join(TOOLS, 'node_modules', '.bin');
const OUT_OF_CONTRACT = join(ROOT, 'conformance', 'out-of-contract.yaml');
const REPORT = join(ROOT, 'reports', 'contract-judges.json');

/** A request violation the suite causes on purpose (conformance/out-of-contract.yaml). */
export interface OutOfContract {
  readonly method: string;
  /** The path template of the operation, as in the document (`/orders/{id}`). */
  readonly path: string;
  /** A regular expression over Prism's message. */
  readonly violation: string;
  /** Why the suite sends it: the rules it measures. */
  readonly why: string;
}

/** One violation Prism reported, with the exchange it belongs to. */
export interface Violation {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly location: string;
  readonly message: string;
}

interface PrismViolation {
  readonly location?: readonly string[];
  readonly message?: string;
}

/** `/orders/123?x=1` against the document's templates: the template it matches, if any. */
export function templateOf(url: string, templates: readonly string[]): string | undefined {
  const path = url.split('?')[0] ?? '';
  return templates.find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
}

/** The violations no entry explains: every response violation, and each request violation no entry matches. */
export function unexplained(
  violations: readonly Violation[],
  allowed: readonly OutOfContract[],
  templates: readonly string[],
): Violation[] {
  return violations.filter((v) => {
    if (v.location !== 'request') return true;
    const template = templateOf(v.url, templates) ?? v.url.split('?')[0];
    return !allowed.some(
      (a) =>
        (a.method === '*' || a.method === v.method) && (a.path === '*' || a.path === template) && new RegExp(a.violation).test(v.message),
    );
  });
}

export function loadOutOfContract(text: string): OutOfContract[] {
  const entries = (parse(text) as { requests?: OutOfContract[] }).requests ?? [];
  for (const e of entries) {
    if (!e.method || !e.path || !e.violation || !e.why)
      throw new Error(`out-of-contract entry needs method, path, violation and why: ${JSON.stringify(e)}`);
  }
  return entries;
}

function ensureTools(): Promise<number> {
  if (existsSync(join(BIN, 'prism')) && existsSync(join(BIN, 'spectral'))) return Promise.resolve(0);
  return runCommand('npm', ['ci', '--prefix', TOOLS, '--no-audit', '--no-fund']);
}

/** Spectral's spectral:oas findings, by severity name. */
async function spectral(): Promise<{ errors: number; warnings: number }> {
  const child = spawn(join(BIN, 'spectral'), ['lint', DOCUMENT, '--ruleset', join(TOOLS, 'spectral.yaml'), '--format', 'json', '--quiet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  await new Promise((resolve) => child.once('close', resolve));
  const findings = JSON.parse(out || '[]') as { severity: number; code: string; message: string; path: string[] }[];
  for (const f of findings)
    process.stdout.write(`judges: spectral ${f.severity === 0 ? 'error' : 'warning'} ${f.code}: ${f.message} at ${f.path.join('.')}\n`);
  return { errors: findings.filter((f) => f.severity === 0).length, warnings: findings.filter((f) => f.severity === 1).length };
}

async function redocly(): Promise<{ errors: number; warnings: number }> {
  const problems = await lint({ ref: DOCUMENT, config: await createConfig({ extends: ['recommended'] }) });
  for (const p of problems) process.stdout.write(`judges: redocly ${p.severity} ${p.ruleId}: ${p.message}\n`);
  return { errors: problems.filter((p) => p.severity === 'error').length, warnings: problems.filter((p) => p.severity === 'warn').length };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts `command`, resolves once a line of its output matches `ready` (a hang guard of 60 s). */
function startUntil(command: string, args: readonly string[], env: NodeJS.ProcessEnv, ready: RegExp, label: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    let started = false;
    const guard = setTimeout(() => reject(new Error(`${label} did not start within 60 s:\n${seen.slice(-2000)}`)), 60_000);
    // Read to the end (a full pipe would stall the child), kept only until it is ready.
    const look = (chunk: Buffer): void => {
      if (started) return;
      seen += chunk.toString('utf8');
      if (ready.test(seen)) {
        started = true;
        clearTimeout(guard);
        resolve(child);
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    child.once('exit', (code) => reject(new Error(`${label} exited (${code}) before it was ready:\n${seen.slice(-2000)}`)));
  });
}

/** The recorder's messages for requests it does not give Prism: listed in out-of-contract.yaml like Prism's own. */
export const NOT_A_URI = 'the target is not a valid URI (malformed percent-encoding): sent to the service directly';
export const NOT_JSON = 'the body declared JSON is not JSON: sent to the service directly';

function validUri(target: string): boolean {
  try {
    decodeURI(target);
    return true;
  } catch {
    return false;
  }
}

/** A body Prism 5.16 never answers: declared JSON (or undeclared), not empty, and not JSON. */
function unparsableJson(headers: IncomingHttpHeaders, body: Buffer): boolean {
  const type = headers['content-type'];
  if (body.length === 0 || (type !== undefined && !/json/i.test(type))) return false;
  try {
    JSON.parse(body.toString('utf8'));
    return false;
  } catch {
    return true;
  }
}

/**
 * A recording proxy to Prism (`prismPort`): each exchange's `sl-violations` (Prism's findings) is collected. Two
 * kinds of request go to the service (`servicePort`) directly, each recorded as a request violation, because
 * Prism 5.16 cannot take them: a target with a malformed percent-encoding (URIError, after which it stops
 * answering on every connection) and a body declared JSON that is not (it never answers). The body is read
 * whole before it is forwarded.
 */
function recorder(prismPort: number, servicePort: number, violations: Violation[], unjudged: string[]): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      const body = Buffer.concat(chunks);
      const refusal = !validUri(req.url ?? '/') ? NOT_A_URI : unparsableJson(req.headers, body) ? NOT_JSON : undefined;
      const record = (status: number, location: string, message: string): void => {
        violations.push({ method: req.method ?? '', url: req.url ?? '', status, location, message });
      };
      const forward = httpRequest(
        {
          host: '127.0.0.1',
          port: refusal === undefined ? prismPort : servicePort,
          method: req.method,
          path: req.url,
          headers: req.headers,
          // A connection per exchange: a keep-alive one Prism has dropped would fail the next request.
          agent: false,
        },
        (answer) => {
          if (refusal !== undefined) record(answer.statusCode ?? 0, 'request', refusal);
          const found = answer.headers['sl-violations'];
          if (typeof found === 'string') {
            for (const v of JSON.parse(found) as PrismViolation[]) record(answer.statusCode ?? 0, v.location?.[0] ?? '?', v.message ?? '');
          }
          res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
          answer.pipe(res);
        },
      );
      forward.once('error', (error: NodeJS.ErrnoException) => {
        unjudged.push(`${req.method} ${req.url}: ${error.code ?? error.message}`);
        res.destroy();
      });
      forward.end(body);
    });
  });
}

function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function prismRun(): Promise<{ violations: Violation[]; unjudged: string[]; suiteExit: number }> {
  const [api, admin, prismPort] = [await freePort(), await freePort(), await freePort()];
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL'].includes(k) && !k.startsWith('CONFORMANCE_')),
  );
  let service: ChildProcess | undefined;
  let prism: ChildProcess | undefined;
  let proxy: Server | undefined;
  const violations: Violation[] = [];
  const unjudged: string[] = [];
  try {
    service = await startUntil(
      process.execPath,
      ['bin/orders-grpc.ts', '--embedded'],
      { ...env, HTTP_ADDR: `127.0.0.1:${api}`, ADMIN_ADDR: `127.0.0.1:${admin}` },
      /"api: listening"/,
      'orders-grpc --embedded',
    );
    prism = await startUntil(
      join(BIN, 'prism'),
      ['proxy', DOCUMENT, `http://127.0.0.1:${api}`, '--host', '127.0.0.1', '--port', String(prismPort)],
      env,
      /Prism is listening/,
      'prism proxy',
    );
    proxy = recorder(prismPort, api, violations, unjudged);
    await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    process.stdout.write(
      `judges: conformance --url ${url} (recorder → prism :${prismPort} → orders-grpc --embedded :${api}), admin :${admin}\n`,
    );
    const suiteExit = await runCommand(
      process.execPath,
      ['scripts/conformance.ts', '--url', url, '--admin-url', `http://127.0.0.1:${admin}`, '--driver', 'rest-http1'],
      { env },
    );
    return { violations, unjudged, suiteExit };
  } finally {
    if (proxy !== undefined) {
      proxy.closeAllConnections();
      proxy.close();
    }
    await stop(prism);
    await stop(service);
  }
}

if (import.meta.main) {
  if ((await ensureTools()) !== 0) throw new Error('npm ci in tools/contract failed');
  const spectralResult = await spectral();
  const redoclyResult = await redocly();
  const { violations, unjudged, suiteExit } = await prismRun();
  const document = parse(readFileSync(DOCUMENT, 'utf8')) as { paths: Record<string, unknown> };
  const allowed = loadOutOfContract(readFileSync(OUT_OF_CONTRACT, 'utf8'));
  const bad = unexplained(violations, allowed, Object.keys(document.paths));
  const responses = violations.filter((v) => v.location !== 'request');
  const requests = violations.filter((v) => v.location === 'request');
  const listed = new Set(
    requests.map((v) => {
      const template = templateOf(v.url, Object.keys(document.paths)) ?? v.url;
      return `${v.method} ${template}: ${v.message}`;
    }),
  );
  mkdirSync(join(ROOT, 'reports'), { recursive: true });
  writeFileSync(
    REPORT,
    `${JSON.stringify({ spectral: spectralResult, redocly: redoclyResult, suiteExit, violations, unjudged }, null, 2)}\n`,
  );
  process.stdout.write(
    [
      `judges: spectral (spectral:oas) ${spectralResult.errors} errors, ${spectralResult.warnings} warnings`,
      `judges: redocly (recommended) ${redoclyResult.errors} errors, ${redoclyResult.warnings} warnings`,
      `judges: prism ${responses.length} response violations, ${requests.length} request violations of ${listed.size} kinds:`,
      ...[...listed].sort().map((l) => `judges:   ${l}`),
      `judges: the conformance suite through the proxies exited ${suiteExit} (not judged: the listener there is Prism's)`,
      `judges: ${unjudged.length} exchanges got no answer through Prism, so no verdict: ${unjudged.slice(0, 10).join('; ')}`,
      ...bad.map((v) => `judges: UNEXPLAINED ${v.location} violation on ${v.method} ${v.url} (${v.status}): ${v.message}`),
      `judges: report ${REPORT}`,
      '',
    ].join('\n'),
  );
  process.exitCode = spectralResult.errors > 0 || redoclyResult.errors > 0 || bad.length > 0 ? 1 : 0;
}
