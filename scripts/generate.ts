/**
 * `npm run generate`: src/gen from proto/ with the pinned buf and protoc-gen-es (buf.gen.yaml), then
 * the embedded OpenAPI document and its TypeScript types for the contract test's client (buf's `clean`
 * empties src/gen first, so all are written each time), and spec/README.md's rule items from
 * spec/rules.yaml (scripts/spec-readme.ts).
 */
import { execFileSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { bufBinary } from './buf.ts';
import { embedOpenapi } from './embed-openapi.ts';
import { generateOpenapiTypes } from './openapi-types.ts';
import { writeSpecReadme } from './spec-readme.ts';

const root = join(import.meta.dirname, '..');

/** Everything under `outDir` (the repository root, or a scratch tree for check-generated.ts); `bufArgs` go to `buf generate`. */
export async function generate(bufArgs: readonly string[], outDir = root): Promise<void> {
  // buf.gen.yaml names the plugin `protoc-gen-es`: found on PATH, as under `npm run`.
  const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env['PATH'] ?? ''}` };
  execFileSync(bufBinary(), ['generate', ...bufArgs], { cwd: root, stdio: 'inherit', env });
  embedOpenapi(outDir);
  await generateOpenapiTypes(outDir);
}

if (import.meta.main) {
  await generate(process.argv.slice(2));
  const changed = writeSpecReadme();
  if (changed.length > 0) process.stdout.write(`spec/README.md: ${changed.length} rule items rewritten from spec/rules.yaml\n`);
}
