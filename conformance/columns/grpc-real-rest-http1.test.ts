import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'grpc-real-rest-http1', transports: ['grpc'], backends: ['real'], drivers: ['rest-http1'] });
