/**
 * Fails when src/gen is not what `npm run generate` makes today: `buf generate` from proto/ (the
 * committed gRPC code and the contract cannot drift apart, spec 4.4, 9 rule 1) and the embedded
 * OpenAPI document and its TypeScript types (scripts/openapi-types.ts) from openapi/openapi.yaml (spec 9 rule 3). Regenerates both into a temporary
 * directory (buf's --output prefixes every `out`), then compares the two trees byte for byte (git diff --no-index).
 * Also fails when spec/README.md's rule items differ from spec/rules.yaml (scripts/spec-readme.ts).
 * Run with `npm run check:generated`; fix with `npm run generate`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from './generate.ts';
import { specReadmeDrift } from './spec-readme.ts';

const root = join(import.meta.dirname, '..');
const GEN_DIR = join('src', 'gen');

if (import.meta.main) {
  const scratch = mkdtempSync(join(tmpdir(), 'orders-gen-'));
  try {
    await generate(['--output', scratch], scratch);
    // Byte for byte, both trees: git lists each file that is missing (D), stale (M) or unexpected (A).
    const diff = spawnSync('git', ['diff', '--no-index', '--name-status', join(scratch, GEN_DIR), join(root, GEN_DIR)], {
      encoding: 'utf8',
    });
    if (diff.status === 0) process.stdout.write(`${GEN_DIR} is up to date\n`);
    else {
      process.stderr.write(`${GEN_DIR} is out of date with proto/ or openapi/ (run \`npm run generate\`):\n${diff.stdout}${diff.stderr}`);
      process.exitCode = 1;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const drift = specReadmeDrift();
  if (drift.length === 0) process.stdout.write('spec/README.md lists the rules as spec/rules.yaml words them\n');
  else {
    process.stderr.write(
      `spec/README.md differs from spec/rules.yaml for ${drift.length} rules (run \`npm run generate\`): ${drift.join(', ')}\n`,
    );
    process.exitCode = 1;
  }
}
