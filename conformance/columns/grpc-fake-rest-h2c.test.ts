import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'grpc-fake-rest-h2c', transports: ['grpc'], backends: ['fake'], drivers: ['rest-h2c'] });
