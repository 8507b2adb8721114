import { describeSigtermKeepAlive } from './sigterm-keepalive.ts';

describeSigtermKeepAlive('real');
