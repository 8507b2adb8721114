import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'grpc-fake-grpc', transports: ['grpc'], backends: ['fake'], drivers: ['grpc'] });
