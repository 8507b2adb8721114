import { expect } from 'vitest';

/** Small HTTP client for the restart-durability suite: every response body is kept for the secret scan. */
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

  async call(method: string, path: string, options: { token?: string; body?: unknown; keep?: boolean } = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.baseUrl}${path}`, {
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
