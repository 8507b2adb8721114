import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'stdlib-fake-process', transports: ['stdlib'], backends: ['fake'], drivers: ['process'] });
