// The ceiling: a bare node:http server answering every request with the same Order JSON the service
// returns for GET /orders/{id}, with no routing, auth, I/O, logging or observability.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, serveParent } from './child.ts';

const order = {
  id: randomUUID(),
  item: 'bench item',
  quantity: 1,
  status: 'pending',
  created_at: new Date().toISOString(),
};

const server = createServer((_req, res) => {
  // Serialised per request, as any handler returning a fresh object would.
  const text = JSON.stringify(order);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
});

serveParent({
  stop: () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
});

server.listen(0, '127.0.0.1', () => {
  announce({ ready: { port: (server.address() as AddressInfo).port, seedMs: 0 } });
});
