import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'stdlib-spawned', transports: ['stdlib'], backends: ['spawned'] });
