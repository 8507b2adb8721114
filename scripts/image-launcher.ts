#!/usr/bin/env node
// The conformance runner's launcher for the Docker image (npm run conformance -- --url … --launch
// "scripts/image-launcher.ts <image> <bin>"): a case with settings of its own gets an instance of its own,
// `<bin> --embedded` from the image with the case's environment, on the host's network so that its
// listeners' addresses (HTTP_ADDR/ADMIN_ADDR 127.0.0.1:0) and its log are the process's own. Values travel
// in docker's environment (`-e NAME`), never in argv; SIGTERM stops the container (docker run forwards it).
import { spawn } from 'node:child_process';

const [image, bin] = process.argv.slice(2);
if (image === undefined || bin === undefined) {
  process.stderr.write('usage: image-launcher.ts <image> <bin>\n');
  process.exit(2);
}
/** What spawnBin adds for a Node child, not the service's settings. */
const HOST_ONLY = new Set(['PATH', 'HOME', 'NODE_COMPILE_CACHE']);
const names = Object.keys(process.env).filter((name) => !HOST_ONLY.has(name));
const docker = spawn('docker', ['run', '--rm', '--network', 'host', ...names.flatMap((n) => ['-e', n]), image, bin, '--embedded'], {
  stdio: ['ignore', 'inherit', 'inherit'],
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => docker.kill(signal));
docker.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)));
