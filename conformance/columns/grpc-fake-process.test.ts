import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'grpc-fake-process', transports: ['grpc'], backends: ['fake'], drivers: ['process'] });
