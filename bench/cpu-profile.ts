/**
 * Summary of a V8 CPU profile (`node --cpu-prof`, e.g. the bench service run with
 * `npm run bench -- --only me --node-options="… --cpu-prof --cpu-prof-dir=<dir>"`): self time by
 * function and by package over the last `--last` seconds of the profile (the measured phase, not
 * the start-up), idle and garbage collection shown apart.
 *   tsx bench/cpu-profile.ts <file.cpuprofile> [--last <s>] [--top <n>]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { last: { type: 'string', default: '12' }, top: { type: 'string', default: '25' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: tsx bench/cpu-profile.ts <file.cpuprofile> [--last <s>] [--top <n>]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));

/** The package (node_modules/<name>), node's own code, or the project's file of a frame. */
function packageOf(url: string): string {
  if (!url) return '(native)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1]!;
  if (url.startsWith('node:')) return 'node core';
  const project = /\/(src|bench)\/(.+)$/.exec(url);
  return project ? `${project[1]}/${project[2]}` : url;
}

let time = profile.startTime;
const stamps = profile.timeDeltas.map((delta) => (time += delta));
const from = profile.endTime - Number(args.last) * 1e6;
const selfByFunction = new Map<string, number>();
const selfByPackage = new Map<string, number>();
let total = 0;
let idle = 0;
for (let i = 0; i < profile.samples.length; i++) {
  if (stamps[i]! < from) continue;
  const node = byId.get(profile.samples[i]!)!;
  const delta = (stamps[i + 1] ?? profile.endTime) - stamps[i]!;
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName === '(idle)' || functionName === '(program)' && !url) {
    if (functionName === '(idle)') { idle += delta; continue; }
  }
  total += delta;
  const name = `${functionName || '(anonymous)'} ${url ? `${packageOf(url)}:${lineNumber + 1}` : ''}`.trim();
  selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + delta);
  const pkg = url ? packageOf(url) : functionName.startsWith('(') ? functionName : '(native)';
  selfByPackage.set(pkg, (selfByPackage.get(pkg) ?? 0) + delta);
}
const top = Number(args.top);
const pct = (value: number) => `${((value / total) * 100).toFixed(1)} %`;
console.log(`busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s over the last ${args.last} s`);
console.log('\n| self time by package or file | share |\n|---|---:|');
for (const [name, value] of [...selfByPackage].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`| ${name} | ${pct(value)} |`);
console.log('\n| self time by function | share |\n|---|---:|');
for (const [name, value] of [...selfByFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`| \`${name}\` | ${pct(value)} |`);
