import module from 'node:module';
import { pathToFileURL } from 'node:url';
module.enableCompileCache?.();
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const out = [];
let last = cpu();
out.push(`boot ${last.toFixed(0)}`);
for (const spec of process.argv.slice(2)) {
  await import(spec.startsWith('dist') ? pathToFileURL('/work/wt/respawn31/' + spec).href : spec);
  const now = cpu();
  out.push(`${spec.replace('dist/src/', '')} ${(now - last).toFixed(0)}`);
  last = now;
}
console.log(out.join(' | '), '| total', last.toFixed(0));
