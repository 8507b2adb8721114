// runComponents' failure paths and edges (spec 3.4); the order itself is the lifecycle-order-and-shutdown conformance case.
import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { until } from '../../test/support/eventually.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { createLogger } from '../observability/logger.ts';
import type { Component } from './component.ts';
import { runComponents } from './runner.ts';

/** A component that records every call in a shared journal; behaviour is set per method. */
interface FakeOptions {
  initFails?: Error;
  /** Default: returns when the signal aborts. */
  run?: ((signal: AbortSignal) => Promise<void>) | null;
  stopFails?: Error;
}

function fake(name: string, journal: string[], options: FakeOptions = {}): Component & { signal?: AbortSignal } {
  const component: Component & { signal?: AbortSignal } = {
    name,
    async init() {
      journal.push(`init ${name}`);
      if (options.initFails) throw options.initFails;
    },
    async stop() {
      journal.push(`stop ${name}`);
      if (options.stopFails) throw options.stopFails;
    },
  };
  if (options.run !== null) {
    component.run = async (signal) => {
      component.signal = signal;
      journal.push(`run ${name}`);
      if (options.run) await options.run(signal);
      else if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      journal.push(`ran ${name}`);
    };
  }
  return component;
}

function setup() {
  const logs = new LogCapture();
  return { logs, logger: createLogger('debug', logs), journal: [] as string[], controller: new AbortController() };
}

describe('runComponents (spec 3.4)', () => {
  // Init order, every Run returning on cancel before Stop runs in reverse, over the real components, is the
  // lifecycle-order-and-shutdown process case (once per transport); these are the failure paths and edges.
  it.each([
    ['the third', 2, ['init a', 'init b', 'init c', 'stop b', 'stop a'], 1],
    ['the first', 0, ['init a'], 0],
  ])(
    'an init failure of %s component stops the already initialised ones in reverse and rethrows; later ones never init or run; a stop failure in that rollback is logged and the init error is still the one rethrown',
    async (_label, failing, expected, stopFailures) => {
      const { logger, logs, journal, controller } = setup();
      const boom = new Error('cache: connect refused');
      const components = ['a', 'b', 'c', 'd'].map((name, i) =>
        fake(name, journal, i === failing ? { initFails: boom } : name === 'b' ? { stopFails: new Error('b stop') } : {}),
      );
      await expect(runComponents(components, controller.signal, logger)).rejects.toBe(boom);
      expect(journal).toEqual(expected);
      expect(logs.find('lifecycle: stop failed')).toHaveLength(stopFailures);
    },
  );

  it('stops only after ALL runs have returned, however slowly, then in reverse; a component without run holds nothing up, one without stop is skipped', async () => {
    const { logger, journal, controller } = setup();
    const slow = async (signal: AbortSignal): Promise<void> => {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await sleep(80); // drains in-flight work after the cancel
    };
    const bare: Component = { name: 'bare' };
    const done = runComponents(
      [fake('a', journal, { run: slow }), bare, fake('b', journal), fake('c', journal, { run: null })],
      controller.signal,
      logger,
    );
    await until(() => journal.includes('run b'), 'run b (runs start asynchronously)');
    controller.abort();
    await done;
    expect(journal).toEqual(['init a', 'init b', 'init c', 'run a', 'run b', 'ran b', 'ran a', 'stop c', 'stop b', 'stop a']);
  });

  it('a run failure aborts the others, stops everything in reverse after all runs return, logs every failure and rethrows the first', async () => {
    const { logger, logs, journal, controller } = setup();
    const failure = new Error('api: listen: EADDRINUSE');
    const failing = async (): Promise<void> => {
      await sleep(20);
      throw failure;
    };
    // c fails too, on the abort the first failure caused.
    const onAbort = async (signal: AbortSignal): Promise<void> => {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      throw new Error('second');
    };
    const components = [fake('a', journal), fake('b', journal, { run: failing }), fake('c', journal, { run: onAbort })];
    await expect(runComponents(components, controller.signal, logger)).rejects.toBe(failure);
    expect(components[0]!.signal!.aborted).toBe(true);
    expect(controller.signal.aborted).toBe(false); // the caller's signal is not touched
    expect(journal).toContain('ran a');
    expect(journal).not.toContain('ran b');
    expect(journal.slice(-3)).toEqual(['stop c', 'stop b', 'stop a']);
    expect(logs.find('lifecycle: run failed')).toEqual([
      expect.objectContaining({ level: 'error', component: 'b', err: 'api: listen: EADDRINUSE' }),
      expect.objectContaining({ level: 'error', component: 'c', err: 'second' }),
    ]);
  });

  it('a signal aborted before the start still inits, runs (already aborted) and stops everything; a stop failure is logged and does not prevent the other stops', async () => {
    const { logger, logs, journal, controller } = setup();
    const components = [fake('a', journal), fake('b', journal, { stopFails: new Error('flush failed') }), fake('c', journal)];
    controller.abort();
    await expect(runComponents(components, controller.signal, logger)).resolves.toBeUndefined();
    expect(components[0]!.signal!.aborted).toBe(true);
    expect(journal.slice(0, 3)).toEqual(['init a', 'init b', 'init c']);
    expect(journal.slice(3, 9).sort()).toEqual(['ran a', 'ran b', 'ran c', 'run a', 'run b', 'run c']);
    expect(journal.slice(9)).toEqual(['stop c', 'stop b', 'stop a']);
    expect(logs.find('lifecycle: stop failed')).toEqual([expect.objectContaining({ level: 'error', component: 'b', err: 'flush failed' })]);
  });

  it("the runner's listener leaves the caller's signal: once it has fired (while runs still return), and when a run failure ends the runs with the signal never aborted", async () => {
    const { logger, journal, controller } = setup();
    let listenersAfterAbort = -1;
    const slow = fake('slow', journal, {
      run: async (signal) => {
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        listenersAfterAbort = getEventListeners(controller.signal, 'abort').length;
      },
    });
    const running = runComponents([slow], controller.signal, logger);
    await until(() => journal.includes('run slow'), 'the slow run started');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    await running;
    expect(listenersAfterAbort).toBe(0);

    const other = setup();
    const boom = new Error('run failed');
    const failing = fake('failing', other.journal, { run: () => Promise.reject(boom) });
    await expect(runComponents([failing], other.controller.signal, other.logger)).rejects.toBe(boom);
    expect(other.controller.signal.aborted).toBe(false);
    expect(getEventListeners(other.controller.signal, 'abort')).toHaveLength(0);
  });
});
