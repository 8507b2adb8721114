import type { BareInsertResult, ChildMessage, ParentRequest, ProcessSample } from './ipc-protocol.ts';

/** What a server child can do beyond sampling itself; absent hooks answer with an error. */
export interface ChildHooks {
  setLogLevel?(level: string): void;
  bareInsert?(concurrency: number, durationMs: number, maxCount: number): Promise<BareInsertResult>;
  stop(): Promise<void>;
}

const PEAK_SAMPLE_MS = 25;

/**
 * The child side of bench/ipc-protocol.ts. CPU and memory are read inside the server process itself
 * (process.cpuUsage is per process and microsecond-precise; /proc's ticks are 10 ms), so the load
 * generator's work in the parent never counts against the server.
 */
export function serveParent(hooks: ChildHooks): void {
  if (process.send === undefined) throw new Error('bench child: must be started with an IPC channel');
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss > peakRss) peakRss = rss;
  }, PEAK_SAMPLE_MS);
  sampler.unref();

  const sample = (resetPeak: boolean): ProcessSample => {
    const cpu = process.cpuUsage();
    const rss = process.memoryUsage.rss();
    const result: ProcessSample = {
      cpuUserUs: cpu.user,
      cpuSystemUs: cpu.system,
      rssBytes: rss,
      peakRssBytes: Math.max(peakRss, rss),
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      heapUsedBytes: process.memoryUsage().heapUsed,
      monotonicUs: Number(process.hrtime.bigint() / 1000n),
    };
    if (resetPeak) peakRss = rss;
    return result;
  };

  const handle = async (request: ParentRequest): Promise<ChildMessage> => {
    switch (request.type) {
      case 'sample':
        return { id: request.id, type: 'sample', sample: sample(request.resetPeak) };
      case 'log-level':
        if (hooks.setLogLevel === undefined) throw new Error('this child has no logger');
        hooks.setLogLevel(request.level);
        return { id: request.id, type: 'log-level' };
      case 'bare-insert':
        if (hooks.bareInsert === undefined) throw new Error('this child has no database');
        return { id: request.id, type: 'bare-insert', result: await hooks.bareInsert(request.concurrency, request.durationMs, request.maxCount) };
      case 'stop':
        clearInterval(sampler);
        await hooks.stop();
        return { id: request.id, type: 'stop' };
    }
  };

  process.on('message', (raw) => {
    const request = raw as ParentRequest;
    handle(request).then(
      (reply) => {
        process.send?.(reply);
        if (request.type === 'stop') process.disconnect();
      },
      (error: unknown) => process.send?.({ id: request.id, type: 'error', error: error instanceof Error ? error.message : String(error) }),
    );
  });
  // The parent went away (crash, Ctrl-C): do not outlive it.
  process.on('disconnect', () => {
    void hooks.stop().finally(() => process.exit(0));
  });
}

export function announce(message: ChildMessage): void {
  process.send?.(message);
}
