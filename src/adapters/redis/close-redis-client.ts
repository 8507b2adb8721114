import type { Redis } from 'ioredis';

/** QUIT when connected (lets in-flight replies arrive), else drop the socket; a failed QUIT drops it too. */
export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // fall through: a failed QUIT still has to release the socket
    }
  }
  client.disconnect();
}
