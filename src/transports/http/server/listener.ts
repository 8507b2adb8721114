/**
 * A public server's listening socket as a lifecycle component (spec 3.3, 3.4): composition runs it beside
 * the backends, and its readiness and stop follow the component contract.
 */
import { once } from 'node:events';
import type { AddressInfo, Server } from 'node:net';
import type { ListenAddress } from '../../../config/env.ts';
import type { Component } from '../../../lifecycle/component.ts';

export interface ListenerOptions {
  /** Component name, and the prefix of its errors (`api: listen: …`). */
  readonly name: string;
  readonly server: Server;
  readonly address: ListenAddress;
  /** Graceful close of whatever the server carries (HTTP keep-alive, HTTP/2 sessions). */
  readonly shutdown: () => Promise<void>;
  /** Node's maxConnections: one more is closed when accepted (rule LIMIT-connections). */
  readonly maxConnections?: number;
}

/** Spec 3.3: not ready until bound; a failed bind rejects run with `<name>: listen: …`; run returns on abort, stop drains. */
export class Listener implements Component {
  readonly name: string;
  readonly #options: ListenerOptions;
  #bound = false;

  constructor(options: ListenerOptions) {
    this.name = options.name;
    this.#options = options;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { server, address, maxConnections } = this.#options;
    if (maxConnections !== undefined) server.maxConnections = maxConnections;
    try {
      server.listen({ port: address.port, host: address.host });
      await once(server, 'listening');
    } catch (error) {
      throw new Error(`${this.name}: listen: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    this.#bound = true;
    if (!signal.aborted) await once(signal, 'abort');
  }

  async ready(): Promise<void> {
    if (!this.#bound) throw new Error(`${this.name}: not accepting connections yet`);
  }

  server(): Server {
    return this.#options.server;
  }

  /** The bound port, once bound (tests listen on port 0). */
  port(): number {
    const info = this.#options.server.address() as AddressInfo | null;
    if (info === null) throw new Error(`${this.name}: not accepting connections yet`);
    return info.port;
  }

  async stop(): Promise<void> {
    this.#bound = false; // spec 3.3: ready until Stop
    if (!this.#options.server.listening) return;
    await this.#options.shutdown();
  }
}
