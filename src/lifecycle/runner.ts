/**
 * The component lifecycle of spec 3.4 (rules LIFE-1-order, LIFE-2-init-connect, READY-cancel): init in
 * dependency order (a failure stops what was initialised, in reverse, and rethrows: nothing starts
 * partially); run every component on one signal; only after all runs have returned, stop in reverse order.
 * A run that fails (not by abort) aborts the others too, and its failure is rethrown after stopping.
 */
import type { Logger } from '../ports/logger.ts';
import type { Component } from './component.ts';

export async function runComponents(components: readonly Component[], signal: AbortSignal, logger: Logger): Promise<void> {
  const initialised: Component[] = [];
  try {
    for (const component of components) {
      await component.init?.();
      initialised.push(component);
    }
  } catch (error) {
    await stopAll(initialised, logger);
    throw error;
  }

  const runSignal = new AbortController();
  const forward = (): void => runSignal.abort();
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });

  let failure: unknown;
  await Promise.all(
    components.map(async (component) => {
      try {
        await component.run?.(runSignal.signal);
      } catch (error) {
        failure ??= error;
        logger.error({ component: component.name, err: error instanceof Error ? error.message : String(error) }, 'lifecycle: run failed');
        runSignal.abort();
      }
    }),
  );
  signal.removeEventListener('abort', forward);
  await stopAll(components, logger);
  if (failure !== undefined) throw failure;
}

async function stopAll(components: readonly Component[], logger: Logger): Promise<void> {
  for (const component of [...components].reverse()) {
    try {
      await component.stop?.();
    } catch (error) {
      logger.error({ component: component.name, err: error instanceof Error ? error.message : String(error) }, 'lifecycle: stop failed');
    }
  }
}
