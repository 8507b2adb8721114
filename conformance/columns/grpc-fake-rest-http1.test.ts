import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'grpc-fake-rest-http1', transports: ['grpc'], backends: ['fake'], drivers: ['rest-http1'] });
