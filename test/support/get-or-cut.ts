import { request } from 'node:http';

/** How one GET ended. */
export interface Outcome {
  readonly status: number | undefined;
  readonly body: string;
  /** The response ended as framed (false: the connection was cut in the middle of it). */
  readonly complete: boolean;
}

/**
 * One GET of `${url}/thing` on a fresh connection, for recovery tests that must tell an answer that ended
 * from one that was cut; rejects when the response neither ends nor is cut within 1 s (a hung connection).
 */
export function getOrCut(url: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the response neither ended nor was cut within 1 s')), 1_000);
    const req = request(`${url}/thing`, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('error', () => undefined);
      res.on('close', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, body, complete: res.complete });
      });
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end();
  });
}
