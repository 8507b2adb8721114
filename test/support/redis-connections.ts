import { Redis } from 'ioredis';
import { vi } from 'vitest';

/** Server-side ids (CLIENT ID) of the ioredis connections `work` opens, to see on the server that they were released. */
export async function redisConnectionsOpenedBy(work: () => Promise<void>): Promise<number[]> {
  const opened: Promise<number>[] = [];
  const original = Redis.prototype.connect;
  const spy = vi.spyOn(Redis.prototype, 'connect').mockImplementation(function (this: Redis) {
    const done = original.call(this);
    opened.push(done.then(async () => Number(await this.client('ID'))));
    return done;
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return Promise.all(opened);
}
