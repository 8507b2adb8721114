import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'koa-fake-process', transports: ['koa'], backends: ['fake'], drivers: ['process'] });
