/**
 * Fails when src/gen is not what `npm run generate` makes today: `buf generate` from proto/ (the
 * committed gRPC code and the contract cannot drift apart, spec 4.4, 9 rule 1) and the embedded
 * OpenAPI document and its TypeScript types (scripts/openapi-types.ts) from openapi/openapi.yaml (spec 9 rule 3). Regenerates both into a temporary
 * directory (buf's --output prefixes every `out`), then compares the two trees byte for byte.
 * Run with `npm run check:generated`; fix with `npm run generate`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { bufBinary } from './buf.ts';
import { embedOpenapi } from './embed-openapi.ts';
import { generateOpenapiTypes } from './openapi-types.ts';

const root = join(import.meta.dirname, '..');
const GEN_DIR = join('src', 'gen');

function listFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

/** Differences between two trees, as human-readable lines; empty when identical. */
export function diffTrees(expectedDir: string, actualDir: string): string[] {
  const expected = listFiles(expectedDir);
  const actual = listFiles(actualDir);
  const problems: string[] = [];
  for (const file of expected) {
    if (!actual.includes(file)) problems.push(`missing: ${file}`);
    else if (!readFileSync(join(expectedDir, file)).equals(readFileSync(join(actualDir, file)))) problems.push(`stale: ${file}`);
  }
  for (const file of actual) if (!expected.includes(file)) problems.push(`unexpected: ${file}`);
  return problems;
}

if (import.meta.main) {
  const scratch = mkdtempSync(join(tmpdir(), 'orders-gen-'));
  try {
    const bin = join(root, 'node_modules', '.bin');
    // buf.gen.yaml names the plugin `protoc-gen-es`: found on PATH, as under `npm run`.
    const env = { ...process.env, PATH: `${bin}${delimiter}${process.env['PATH'] ?? ''}` };
    execFileSync(bufBinary(), ['generate', '--output', scratch], { cwd: root, stdio: 'inherit', env });
    embedOpenapi(scratch);
    await generateOpenapiTypes(scratch);
    const problems = diffTrees(join(scratch, GEN_DIR), join(root, GEN_DIR));
    if (problems.length > 0) {
      process.stderr.write(`${GEN_DIR} is out of date with proto/ or openapi/ (run \`npm run generate\`):\n${problems.map((p) => `  ${p}\n`).join('')}`);
      process.exitCode = 1;
    } else {
      process.stdout.write(`${GEN_DIR} is up to date\n`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
