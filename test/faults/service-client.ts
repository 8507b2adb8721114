import { randomUUID } from 'node:crypto';
import { stdlibTransport } from '../../src/transports/stdlib/stdlib-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { HealthReport } from '../../src/lifecycle/checker.ts';

/** Small HTTP client for whole-service fault tests: every response body is kept for the secret scan. */
export interface Reply {
  readonly status: number;
  readonly text: string;
  /** Parsed body, or undefined when it is not JSON. */
  readonly json: unknown;
}

export class ServiceClient {
  readonly baseUrl: string;
  readonly adminUrl: string;
  /** Every body received, error or not, in order, except login answers (they carry the token by design). */
  readonly bodies: string[] = [];

  constructor(baseUrl: string, adminUrl: string) {
    this.baseUrl = baseUrl;
    this.adminUrl = adminUrl;
  }

  async call(method: string, path: string, options: { token?: string; body?: unknown; base?: string; keep?: boolean } = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${options.base ?? this.baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    if (options.keep !== false) this.bodies.push(text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, text, json };
  }

  async login(username: string, password: string): Promise<string> {
    const reply = await this.call('POST', '/auth/login', { body: { username, password }, keep: false });
    expect(reply.status, reply.text).toBe(200);
    return (reply.json as { token: string }).token;
  }

  createOrder(token: string, item: string, quantity = 1): Promise<Reply> {
    return this.call('POST', '/orders', { token, body: { item, quantity } });
  }

  async healthz(): Promise<{ status: number; report: HealthReport }> {
    const reply = await this.call('GET', '/healthz', { base: this.adminUrl });
    return { status: reply.status, report: reply.json as HealthReport };
  }

  /** Polls /healthz every 50 ms until it is 200 and clean; resolves with the elapsed milliseconds. */
  async msUntilClean(timeoutMs: number): Promise<number> {
    const started = performance.now();
    for (;;) {
      const { status, report } = await this.healthz();
      if (status === 200 && report.clean) return performance.now() - started;
      if (performance.now() - started > timeoutMs) {
        throw new Error(`/healthz not clean within ${timeoutMs} ms: ${JSON.stringify(report)}`);
      }
      await sleep(50);
    }
  }

  /** Polls /healthz every 50 ms until `node` is failing; resolves with the report. */
  async untilNodeFails(node: string, timeoutMs: number): Promise<HealthReport> {
    const started = performance.now();
    for (;;) {
      const { status, report } = await this.healthz();
      if (status === 503 && report.nodes?.some((n) => n.name === node && n.status !== 'ok')) return report;
      if (performance.now() - started > timeoutMs) {
        throw new Error(`/healthz never showed ${node} failing within ${timeoutMs} ms: ${JSON.stringify(report)}`);
      }
      await sleep(50);
    }
  }
}

/** The three spec 2.3 nodes: `failing` must be unavailable with an error text, every other one ok without. */
export function expectOnlyFailing(report: HealthReport, failing: string): string {
  expect(report.clean).toBe(false);
  const nodes = report.nodes ?? [];
  expect(nodes.map((n) => n.name).sort()).toEqual(['cache', 'database', 'publisher']);
  let error = '';
  for (const node of nodes) {
    if (node.name === failing) {
      expect(node.status).toBe('unavailable');
      expect(typeof node.error).toBe('string');
      expect(node.error).not.toBe('');
      error = node.error ?? '';
    } else {
      expect(node, JSON.stringify(report)).toEqual({ name: node.name, status: 'ok' });
    }
  }
  return error;
}

/** Fails naming the secret's label (never its value) if any text contains any secret. */
export function expectNoSecrets(texts: readonly string[], secrets: Readonly<Record<string, string>>): void {
  expect(texts.length).toBeGreaterThan(0);
  for (const [label, secret] of Object.entries(secrets)) {
    expect(secret.length, `secret ${label} is too short to search for`).toBeGreaterThanOrEqual(8);
    const hits = texts.filter((text) => text.includes(secret)).length;
    expect(hits, `${label} appears in ${hits} captured line(s)`).toBe(0);
  }
}

/** The whole service in-process on real backends (one of them a private server), with one logged-in user. */
export async function startWithUser(label: string, env: Readonly<Record<string, string>>): Promise<{ app: InProcessApp; client: ServiceClient; username: string; password: string; token: string }> {
  const app = await startInProcess({ transport: stdlibTransport, backend: 'real', env });
  const client = new ServiceClient(app.baseUrl, app.adminUrl);
  const username = `${label}-${randomUUID()}`;
  const password = await app.addUser(username);
  return { app, client, username, password, token: await client.login(username, password) };
}
