import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'grpc-spawned', transports: ['grpc'], backends: ['spawned'] });
