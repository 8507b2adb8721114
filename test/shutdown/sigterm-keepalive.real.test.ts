import { describeSigtermUnderLoad } from './sigterm-keepalive.ts';

describeSigtermUnderLoad('real');
