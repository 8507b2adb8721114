import type { Reply } from './driver.ts';

/** Parses a REST answer into a Reply: JSON bodies are parsed, anything else stays text. */
export function restReply(status: number, headers: Record<string, string>, text: string, httpVersion: string): Reply {
  let body: unknown;
  if ((headers['content-type'] ?? '').startsWith('application/json')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { api: 'rest', status, headers, text, httpVersion, body };
}

/** Flattens node's header object (arrays joined) with lower-case names. */
export function flatHeaders(raw: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || name.startsWith(':')) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}
