/**
 * Before/after table of two bench results (bench/results/<label>.json), per scenario:
 * requests per second, p50, p99, and the server's RSS peak; written to stdout and, between
 * <!-- bench:<section>:start --> and <!-- bench:<section>:end --> (section "compare" unless
 * --section names another), into BENCHMARKS.md. --only keeps some scenarios (their keys).
 *   tsx bench/compare.ts bench/results/before.json bench/results/default.json
 *   tsx bench/compare.ts <before.json> <after.json> --section slowpaths --only queue_rh,planning
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT_DIR } from '../src/db/migrate.js';
import type { BenchReport } from './lib/report.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { section: { type: 'string', default: 'compare' }, only: { type: 'string' } },
});
const [beforeFile, afterFile] = positionals;
if (!beforeFile || !afterFile) throw new Error('usage: tsx bench/compare.ts <before.json> <after.json> [--section name] [--only key,key]');
if (!/^[a-z0-9-]+$/.test(args.section!)) throw new Error('--section: lower-case letters, digits and -');
const before = JSON.parse(await readFile(beforeFile, 'utf8')) as BenchReport;
const after = JSON.parse(await readFile(afterFile, 'utf8')) as BenchReport;
const only = args.only ? new Set(args.only.split(',').map((key) => key.trim())) : null;

const fmt = (value: number | null | undefined, digits = 1) => (value === null || value === undefined ? '–' : value.toFixed(digits));
const times = (a: number | null | undefined, b: number | null | undefined) =>
  a && b ? `×${(b / a).toFixed(b / a >= 10 ? 0 : 1)}` : '–';

const lines: string[] = [];
lines.push(`Before: run \`${before.label}\` of ${before.date.slice(0, 16).replace('T', ' ')} UTC; after: run \`${after.label}\` of ` +
  `${after.date.slice(0, 16).replace('T', ' ')} UTC. Same machine, same dataset parameters, same phases.`);
lines.push('');
lines.push('| scenario | conns | req/s before | req/s after | gain | p50 ms before → after | p99 ms before → after |');
lines.push('|---|---:|---:|---:|---:|---:|---:|');
for (const a of after.scenarios.filter((s) => !only || only.has(s.key))) {
  const b = before.scenarios.find((s) => s.key === a.key);
  const conns = b && b.connections !== a.connections ? `${b.connections} → ${a.connections}` : String(a.connections);
  lines.push(`| ${a.label} | ${conns} | ${fmt(b?.rps)} | ${fmt(a.rps)} | ${times(b?.rps, a.rps)} | ` +
    `${fmt(b?.p50)} → ${fmt(a.p50)} | ${fmt(b?.p99)} → ${fmt(a.p99)} |`);
}
lines.push(`| server RSS peak (MB) | | ${fmt(before.rss.peakMb, 0)} | ${fmt(after.rss.peakMb, 0)} | | | |`);
if (!only) lines.push(`| server RSS after start-up (MB) | | ${fmt(before.rss.startMb, 0)} | ${fmt(after.rss.startMb, 0)} | | | |`);
const markdown = lines.join('\n');
console.log(markdown);

const file = path.join(ROOT_DIR, 'BENCHMARKS.md');
const text = await readFile(file, 'utf8').catch(() => null);
const start = `<!-- bench:${args.section}:start -->`;
const end = `<!-- bench:${args.section}:end -->`;
if (text && text.includes(start) && text.includes(end)) {
  await writeFile(file, text.slice(0, text.indexOf(start) + start.length) + `\n${markdown}\n` + text.slice(text.indexOf(end)));
  console.log('BENCHMARKS.md updated');
} else {
  console.log(`BENCHMARKS.md has no section ${start} … ${end}: nothing written there`);
}
