import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'grpc-real-grpc', transports: ['grpc'], backends: ['real'], drivers: ['grpc'] });
