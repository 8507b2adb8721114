import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'stdlib-fake-rest-http1', transports: ['stdlib'], backends: ['fake'], drivers: ['rest-http1'] });
