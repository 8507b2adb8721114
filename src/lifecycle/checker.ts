import type { Component } from './component.ts';

/** Spec 2.3. */
export interface HealthNode {
  readonly name: string;
  readonly status: string;
  readonly error?: string;
}

export interface HealthReport {
  readonly clean: boolean;
  readonly nodes: HealthNode[] | null;
}

/** The small interface the admin routes are written against (spec 4.2), one implementation for all transports. */
export interface Checker {
  health(): Promise<HealthReport>;
  ready(): Promise<HealthReport>;
}

/** Status of a failing node: the spec leaves it open (2.4); ours is `unavailable`. */
export const STATUS_OK = 'ok';
export const STATUS_FAILING = 'unavailable';
const CHECK_TIMEOUT_MS = 2_000;

/** Builds reports from the components that implement the capability; others are left out. */
export class ComponentChecker implements Checker {
  readonly #components: readonly Component[];

  constructor(components: readonly Component[]) {
    this.#components = components;
  }

  health(): Promise<HealthReport> {
    return this.#report((c) => (c.health ? () => c.health!() : undefined));
  }

  ready(): Promise<HealthReport> {
    return this.#report((c) => (c.ready ? () => c.ready!() : undefined));
  }

  async #report(capability: (c: Component) => (() => Promise<void>) | undefined): Promise<HealthReport> {
    const checks = this.#components.flatMap((c) => {
      const check = capability(c);
      return check ? [{ name: c.name, check }] : [];
    });
    if (checks.length === 0) return { clean: true, nodes: null };
    const nodes = await Promise.all(checks.map(({ name, check }) => probe(name, check)));
    return { clean: nodes.every((n) => n.status === STATUS_OK), nodes };
  }
}

async function probe(name: string, check: () => Promise<void>): Promise<HealthNode> {
  const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    await Promise.race([
      check(),
      new Promise<never>((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error(`${name}: check timed out`)), { once: true }),
      ),
    ]);
    return { name, status: STATUS_OK };
  } catch (error) {
    return { name, status: STATUS_FAILING, error: error instanceof Error ? error.message : String(error) };
  }
}
