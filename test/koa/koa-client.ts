/** Small fetch helpers for the Koa transport tests (plain fetch, no client library). */
export interface JsonResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

export async function call(baseUrl: string, method: string, path: string, options: { token?: string; body?: string; headers?: Record<string, string> } = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: options.body });
  const text = await res.text();
  let body: unknown = text;
  if (res.headers.get('content-type') === 'application/json') body = JSON.parse(text);
  return { status: res.status, headers: res.headers, body };
}

export async function login(baseUrl: string, username: string, password: string): Promise<string> {
  const res = await call(baseUrl, 'POST', '/auth/login', { body: JSON.stringify({ username, password }) });
  if (res.status !== 200) throw new Error(`login ${username}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { token: string }).token;
}
