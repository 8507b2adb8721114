import type { Driver, DriverName, DriverOptions } from './driver.ts';
import { grpcDriver } from './grpc.ts';
import { restH2cDriver } from './rest-h2c.ts';
import { restHttp1Driver } from './rest-http1.ts';

export const DRIVER_NAMES: readonly DriverName[] = ['rest-http1', 'rest-h2c', 'grpc'];

export function createDriver(name: DriverName, options: DriverOptions): Driver {
  switch (name) {
    case 'rest-http1':
      return restHttp1Driver(options);
    case 'rest-h2c':
      return restH2cDriver(options);
    case 'grpc':
      return grpcDriver(options);
  }
}
