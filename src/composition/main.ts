/**
 * runMain: one executable run to completion (spec 3.4), its exit code 0 after a signal-driven shutdown, 1 when
 * start-up or a component failed, 2 on bad arguments. The executables (bin/) are this with their transport.
 */
import { Server as TlsServer } from 'node:tls';
import { parseArgs } from 'node:util';
import type { DestinationStream } from 'pino';
import { ConfigError, type Env } from '../config/env.ts';
import { handleStopSignals, type SignalSource } from '../lifecycle/stop-signals.ts';
import { createLogger, parseLogLevel, stdoutDestination } from '../observability/logger.ts';
import type { TransportFactory } from '../transports/transport.ts';
import { startBanner } from './banner.ts';
import type { SpeedRing } from './speed-hooks.ts';
import { loadEmbeddedRing, startService } from './start-service.ts';

export interface MainOptions {
  readonly serviceName: string;
  readonly transport: TransportFactory;
  readonly argv: readonly string[];
  readonly env: Env;
  /** Tests: stand-ins for this process's stdout, stderr, stop signals and exit (default PROCESS_IO). */
  readonly io?: MainIo;
}

export interface MainIo {
  /** Where log lines go; made once the arguments are accepted. */
  readonly stdout: () => DestinationStream;
  readonly stderr: { write(text: string): unknown };
  readonly signals: SignalSource;
  readonly exit: (code: number) => void;
  /** stdout is a terminal: a short banner for a person follows the `api: listening` line (banner.ts). */
  readonly terminal?: boolean;
}

/** The process's own, as the executables run (the speed ring may give stdout another destination). */
export const PROCESS_IO: MainIo = {
  stdout: stdoutDestination,
  stderr: process.stderr,
  signals: process,
  exit: (code) => process.exit(code),
  terminal: process.stdout.isTTY === true,
};

export async function runMain(options: MainOptions): Promise<number> {
  // The executables run with the speed ring (speed/README.md). Delete the line inside, and speed/ may go:
  // the plain core keeps every rule.
  const speed: SpeedRing = {
    ...(await import('../../speed/ring.ts')).speedRing,
  };
  const io = options.io ?? { ...PROCESS_IO, stdout: speed.stdout ?? PROCESS_IO.stdout };
  let embedded: boolean;
  try {
    embedded = parseArgs({ args: [...options.argv], options: { embedded: { type: 'boolean', default: false } } }).values.embedded;
  } catch (error) {
    io.stderr.write(
      `${options.serviceName}: ${error instanceof Error ? error.message : String(error)}\nusage: ${options.serviceName} [--embedded]\n`,
    );
    return 2;
  }
  // Rule 3.4.1: the logger exists before anything that logs, so it reads its own variable first.
  // Embedded: stdout is also kept in a bounded tail for the console page (rule CONSOLE-feed).
  const ring = embedded ? await loadEmbeddedRing() : undefined;
  const stdout = io.stdout();
  const logger = createLogger(parseLogLevel(options.env['LOG_LEVEL']), ring?.tee(stdout) ?? stdout);
  const stop = new AbortController();
  // Rule LIFE-4-shutdown: the first signal stops, a second is logged and ignored, a third exits at once.
  // Never detached: the listeners outlive runMain so a late signal cannot kill a process that is exiting.
  handleStopSignals({
    source: io.signals,
    logger,
    onStop: () => stop.abort(),
    exit: (code) => {
      logger.flush();
      io.exit(code);
    },
  });
  try {
    const service = await startService({ ...options, logger, embedded: ring ?? false, seedDemoUsers: true, signal: stop.signal, speed });
    const { config } = service;
    if (config.tokens.generated) logger.warn('embedded mode: JWT_SECRET is not set; using a random secret, tokens die with this process');
    service.ready.then(
      (ports) => {
        // The bound ports, not the configured ones: `:0` asks the OS for a free port.
        logger.info({ addr: `${config.adminAddr.host ?? ''}:${ports.admin}` }, 'admin: listening');
        logger.info({ addr: `${config.httpAddr.host ?? ''}:${ports.api}` }, 'api: listening');
        const logins = service.embedded?.announce() ?? [];
        if (io.terminal) {
          stdout.write(
            startBanner({
              serviceName: options.serviceName,
              api: { host: config.httpAddr.host, port: ports.api },
              admin: { host: config.adminAddr.host, port: ports.admin },
              secure: service.app.api.server() instanceof TlsServer,
              embedded: service.embedded !== undefined,
              logins,
            }),
          );
        }
      },
      () => undefined,
    );
    await service.done;
    logger.info('stopped');
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.error({ err: message }, error instanceof ConfigError ? 'start-up failed: configuration' : 'start-up failed');
    return 1;
  } finally {
    logger.flush();
  }
}
