// node imp.mjs SPEC...: imports each spec in order, prints ms of each (cumulative load, compile cache on)
import module from 'node:module';
import { pathToFileURL } from 'node:url';
module.enableCompileCache?.();
const out = [];
let last = performance.now();
out.push(`boot ${last.toFixed(0)}`);
for (const spec of process.argv.slice(2)) {
  await import(spec.startsWith('dist') ? pathToFileURL('/work/wt/respawn31/' + spec).href : spec);
  const now = performance.now();
  out.push(`${spec} ${(now - last).toFixed(0)}`);
  last = now;
}
console.log(out.join(' | '), '| total', last.toFixed(0));
