/**
 * `npm run bench:against -- --rev <commit>`: the same scenarios measured on this machine for an
 * earlier commit and for this checkout, alternated, so that a gain is a ratio of one machine.
 * (A figure of another machine is no baseline: machines of the same kind here differ by 1.7 times,
 * BENCHMARKS.md "Correction, 2026-11-26".)
 *
 *   npm run bench:against -- --rev da33811                      absence creation, 3 rounds of 30 s
 *   npm run bench:against -- --rev da33811 --only me,absence_create --rounds 5 --duration 15
 *   options: --scale / --small (dataset size), --keep (keep the dataset copy of this checkout),
 *            --label <name> (the results' file name, against-<commit> by default)
 *
 * Steps: a worktree of <commit> in the temporary directory (`git worktree add --detach`, then
 * `npm ci` there, once: it is reused while it exists); this checkout's dataset (generated when
 * missing, as `npm run bench -- --reuse` would) copied to wfm_bench_against_<size>, a name the
 * earlier bench's clean-up of stale datasets never matches; then per round the earlier commit's
 * own bench (`npm run bench -- --reuse`, its own generator and SQL) and this checkout's
 * (`--template wfm_bench_against_<size>`), the first of the two alternating; each with --no-md.
 * The summary (bench/lib/pairs.ts) goes to stdout and bench/results/<label>.{json,md}.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT_DIR } from '../src/db/migrate.js';
import { runBenchChild, runCommand } from './lib/bench-child.js';
import { ensureTemplate, type DatasetSize } from './lib/dataset.js';
import { createDatabase, dropDatabase } from './lib/db.js';
import { pairsTable, summarisePairs, type PairRound } from './lib/pairs.js';
import { checkedLabel, writeComparison, type BenchReport } from './lib/report.js';
import { SCENARIOS } from './lib/scenarios.js';

const { values: args } = parseArgs({
  options: {
    rev: { type: 'string' },
    only: { type: 'string', default: 'absence_create' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '30' },
    scale: { type: 'boolean', default: false },
    small: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    label: { type: 'string' },
  },
});
if (!args.rev || !/^[A-Za-z0-9._/~^-]{1,100}$/.test(args.rev)) throw new Error('--rev: a commit (hash, tag or branch) is expected');
const only = args.only!.split(',').map((key) => key.trim()).filter(Boolean);
const unknown = only.filter((key) => !SCENARIOS.some((s) => s.key === key));
if (!only.length || unknown.length) throw new Error(`--only: unknown scenario ${unknown.join(', ')} (known: ${SCENARIOS.map((s) => s.key).join(', ')})`);
const rounds = Number(args.rounds);
const duration = Number(args.duration);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error('--rounds: a whole number from 1 to 20 is expected');
if (!Number.isFinite(duration) || duration <= 0) throw new Error('--duration: a positive number of seconds is expected');
const size: DatasetSize = args.scale ? 'scale' : args.small ? 'small' : 'default';
const sizeFlags = size === 'default' ? [] : [`--${size}`];
if (args.label !== undefined) checkedLabel(args.label);

const git = (...gitArgs: string[]) => execFileSync('git', gitArgs, { cwd: ROOT_DIR, encoding: 'utf8' }).trim();
const log = (line: string) => console.log(line);

/** The earlier commit's worktree, made and installed once. */
async function worktreeOf(commit: string): Promise<string> {
  const dir = path.join(tmpdir(), `wfm-bench-against-${commit.slice(0, 12)}`);
  if (!existsSync(path.join(dir, 'package.json'))) {
    log(`worktree: ${dir} at ${commit.slice(0, 12)}`);
    git('worktree', 'prune');
    git('worktree', 'add', '--detach', dir, commit);
  }
  if (!existsSync(path.join(dir, 'node_modules'))) await runCommand('npm', ['ci', '--no-audit', '--no-fund'], dir);
  return dir;
}

/** This checkout's dataset, under a name only this tool uses. */
async function datasetCopy(): Promise<string> {
  const template = await ensureTemplate(size, log);
  const copy = `wfm_bench_against_${size}`;
  await dropDatabase(copy);
  await createDatabase(copy, template);
  return copy;
}

/**
 * The scenarios of `only` an earlier commit's bench knows (a key written in its
 * bench/lib/scenarios.ts): a scenario added since (the creation's floor, say) is run on this
 * checkout alone, and the summary shows it without a ratio.
 */
async function scenariosKnownTo(cwd: string): Promise<string[]> {
  const source = await readFile(path.join(cwd, 'bench/lib/scenarios.ts'), 'utf8').catch(() => null);
  return source === null ? only : only.filter((key) => source.includes(`key: '${key}'`));
}

function benchRun(cwd: string, label: string, extra: string[], scenarios: string[]): Promise<BenchReport> {
  return runBenchChild(cwd, [...sizeFlags, ...extra, '--only', scenarios.join(','), '--duration', String(duration)], label);
}

async function main(): Promise<void> {
  const commit = git('rev-parse', '--verify', `${args.rev}^{commit}`);
  const head = git('rev-parse', 'HEAD');
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  const before = await worktreeOf(commit);
  const copy = await datasetCopy();
  const beforeScenarios = await scenariosKnownTo(before);
  if (!beforeScenarios.length) throw new Error(`--only: ${commit.slice(0, 12)} knows none of ${only.join(', ')}`);
  const missing = only.filter((key) => !beforeScenarios.includes(key));
  if (missing.length) log(`${commit.slice(0, 12)} does not know ${missing.join(', ')}: run on this checkout only`);
  const results: PairRound[] = [];
  try {
    for (let round = 1; round <= rounds; round += 1) {
      const runBefore = () => benchRun(before, `against-before-${round}`, ['--reuse'], beforeScenarios);
      const runAfter = () => benchRun(ROOT_DIR, `against-after-${round}`, ['--template', copy], only);
      // The first of the two alternates, so that a drift of the machine favours neither side.
      if (round % 2 === 1) {
        const b = await runBefore();
        results.push({ before: b, after: await runAfter() });
      } else {
        const a = await runAfter();
        results.push({ before: await runBefore(), after: a });
      }
      log(`round ${round} of ${rounds} done`);
    }
  } finally {
    if (!args.keep) await dropDatabase(copy);
  }
  const summaries = summarisePairs(results);
  const heading = `Before: ${commit.slice(0, 12)} (its own bench and dataset); after: ${head.slice(0, 12)}${dirty ? ' with uncommitted changes' : ''}. ` +
    `${rounds} alternated rounds of ${duration} s, ${size} dataset`;
  await writeComparison(args.label ?? `against-${commit.slice(0, 12)}`, heading, pairsTable(summaries),
    { before: commit, after: head, dirty, size, rounds, duration, summaries, machine: results[0]?.after.machine ?? null });
}

await main();
