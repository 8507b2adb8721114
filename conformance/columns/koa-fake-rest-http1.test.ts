import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'koa-fake-rest-http1', transports: ['koa'], backends: ['fake'], drivers: ['rest-http1'] });
