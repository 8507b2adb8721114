import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'grpc-real-rest-h2c', transports: ['grpc'], backends: ['real'], drivers: ['rest-h2c'] });
