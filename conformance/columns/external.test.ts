import { describeMatrix } from '../runner/describe-matrix.ts';

await describeMatrix({ name: 'external', external: true });
