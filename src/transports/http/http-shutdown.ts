import type { Server } from 'node:http';

/** Our choice: in-flight requests get this long after a stop before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 5_000;

/** Stop accepting, let in-flight requests finish, close idle keep-alive connections, cut after the grace. */
export async function closeHttpServer(server: Server, graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}
