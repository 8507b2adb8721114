import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { HANG_GUARD_MS } from './eventually.ts';

/** Starts `server` on a free loopback port; returns the port. */
export async function listenLocal(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** A port the OS just handed out on loopback; free again once this resolves. */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listenLocal(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** True when a TCP connect to the loopback port succeeds. */
export function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** For a separate process (a spawned server) only: in-process services report readiness themselves. The deadline is a hang guard. */
export async function waitForPort(port: number, timeoutMs = HANG_GUARD_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await portAccepts(port))) {
    if (Date.now() > deadline) throw new Error(`port ${port} did not accept connections within ${timeoutMs} ms`);
    await sleep(20);
  }
}
