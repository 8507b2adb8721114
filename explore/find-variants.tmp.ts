import { CLASS_VARIANTS, BROKEN_VARIANTS } from './broken-variants.ts';
import { DEFAULT_SHAPE, exploreSeed } from './explorer.ts';
const which = process.argv[2];
for (const variant of [...BROKEN_VARIANTS, ...CLASS_VARIANTS]) {
  if (which !== undefined && !variant.name.includes(which)) continue;
  let found = '';
  let seed = 1;
  for (; seed <= 40; seed++) {
    const o = await exploreSeed(seed, { ...DEFAULT_SHAPE, variant }, { shrink: false });
    if (o.result.violation) { found = o.result.violation.message.slice(0, 220); break; }
  }
  console.log(`${variant.name}: ${found ? `seed ${seed}: ${found}` : 'NOT FOUND in 40'}`);
}
