import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'koa-spawned', transports: ['koa'], backends: ['spawned'] });
