/**
 * Fails when src/gen is not what `npm run generate` makes today: `buf generate` from proto/ (the
 * committed gRPC code and the contract cannot drift apart, spec 4.4, 9 rule 1) and the embedded
 * OpenAPI document and its TypeScript types (scripts/openapi-types.ts) from openapi/openapi.yaml (spec 9 rule 3). Regenerates both into a temporary
 * directory (buf's --output prefixes every `out`), then compares the two trees byte for byte (git diff --no-index).
 * Run with `npm run check:generated`; fix with `npm run generate`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { bufBinary } from './buf.ts';
import { embedOpenapi } from './embed-openapi.ts';
import { generateOpenapiTypes } from './openapi-types.ts';

const root = join(import.meta.dirname, '..');
const GEN_DIR = join('src', 'gen');

if (import.meta.main) {
  const scratch = mkdtempSync(join(tmpdir(), 'orders-gen-'));
  try {
    const bin = join(root, 'node_modules', '.bin');
    // buf.gen.yaml names the plugin `protoc-gen-es`: found on PATH, as under `npm run`.
    const env = { ...process.env, PATH: `${bin}${delimiter}${process.env['PATH'] ?? ''}` };
    execFileSync(bufBinary(), ['generate', '--output', scratch], { cwd: root, stdio: 'inherit', env });
    embedOpenapi(scratch);
    await generateOpenapiTypes(scratch);
    // Byte for byte, both trees: git lists each file that is missing (D), stale (M) or unexpected (A).
    const diff = spawnSync('git', ['diff', '--no-index', '--name-status', join(scratch, GEN_DIR), join(root, GEN_DIR)], { encoding: 'utf8' });
    if (diff.status === 0) process.stdout.write(`${GEN_DIR} is up to date\n`);
    else {
      process.stderr.write(`${GEN_DIR} is out of date with proto/ or openapi/ (run \`npm run generate\`):\n${diff.stdout}${diff.stderr}`);
      process.exitCode = 1;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
