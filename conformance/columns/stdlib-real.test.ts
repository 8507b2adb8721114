import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'stdlib-real', transports: ['stdlib'], backends: ['real'] });
