import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'koa-real', transports: ['koa'], backends: ['real'] });
