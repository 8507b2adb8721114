import { GenericContainer, Wait, type StartedNetwork, type StartedTestContainer } from 'testcontainers';

/** Backends in throw-away containers, with the environment the service and the real-backend tests read. */
export interface ContainerBackends {
  readonly POSTGRES_DSN: string;
  readonly REDIS_ADDR: string;
  readonly NATS_URL: string;
  /** The same variables as seen from another container on the network, when one was given. */
  readonly inNetwork?: { readonly POSTGRES_DSN: string; readonly REDIS_ADDR: string; readonly NATS_URL: string };
  stop(): Promise<void>;
}

/** Host names of the backends on a shared network (as in docker-compose.yml). */
const ALIASES = { postgres: 'postgres', redis: 'redis', nats: 'nats' } as const;

/** Same major versions as docker-compose.yml. */
export const IMAGES = { postgres: 'postgres:16', redis: 'redis:7', nats: 'nats:2' } as const;

/**
 * Starts PostgreSQL (trust auth, database `test`, as on the dev machine), Redis and NATS with
 * JetStream on random host ports, and on `network` under the names postgres, redis and nats when
 * given (scripts/test-image.ts runs the service's image next to them). Not a test file:
 * scripts/test-containers.ts and scripts/test-image.ts drive it, so plain `npm test` never needs Docker.
 */
export async function startContainerBackends(network?: StartedNetwork): Promise<ContainerBackends> {
  const on = (container: GenericContainer, alias: string): GenericContainer =>
    network === undefined ? container : container.withNetwork(network).withNetworkAliases(alias);
  const started: StartedTestContainer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.allSettled(started.map((c) => c.stop()));
  };
  try {
    const [postgres, redis, nats] = await Promise.all([
      on(new GenericContainer(IMAGES.postgres), ALIASES.postgres)
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_DB: 'test' })
        .withExposedPorts(5432)
        // The entrypoint restarts the server once after initdb; the second line is the real one.
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start()
        .then(keep(started)),
      on(new GenericContainer(IMAGES.redis), ALIASES.redis)
        .withCommand(['redis-server', '--save', '', '--appendonly', 'no'])
        .withExposedPorts(6379)
        .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
        .start()
        .then(keep(started)),
      on(new GenericContainer(IMAGES.nats), ALIASES.nats)
        .withCommand(['-js'])
        .withExposedPorts(4222)
        .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
        .start()
        .then(keep(started)),
    ]);
    return {
      POSTGRES_DSN: `postgres://postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/test`,
      REDIS_ADDR: `${redis.getHost()}:${redis.getMappedPort(6379)}`,
      NATS_URL: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
      ...(network === undefined
        ? {}
        : {
            inNetwork: {
              POSTGRES_DSN: `postgres://postgres@${ALIASES.postgres}:5432/test`,
              REDIS_ADDR: `${ALIASES.redis}:6379`,
              NATS_URL: `nats://${ALIASES.nats}:4222`,
            },
          }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function keep(started: StartedTestContainer[]) {
  return (container: StartedTestContainer): StartedTestContainer => {
    started.push(container);
    return container;
  };
}
