import type { Driver, DriverName, DriverOptions } from './driver.ts';
import { grpcDriver } from './grpc.ts';
import { restH2cDriver } from './rest-h2c.ts';
import { restHttp1Driver } from './rest-http1.ts';

const FACTORIES: Readonly<Record<DriverName, (options: DriverOptions) => Driver>> = {
  'rest-http1': restHttp1Driver,
  'rest-h2c': restH2cDriver,
  grpc: grpcDriver,
};

export const DRIVER_NAMES = Object.keys(FACTORIES) as readonly DriverName[];

export function createDriver(name: DriverName, options: DriverOptions): Driver {
  return FACTORIES[name](options);
}
