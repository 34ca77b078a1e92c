/**
 * `npm run fuzz`: the long fuzz run (default 100 000 cases) over every write route of the
 * OpenAPI document, with the properties of test/api/fuzz.test.ts: the process survives, no
 * 5xx, every 400 keyed by field or non_field_errors, the database and the stored files
 * unchanged after each refused request (a "half-write"), no upload left open or half-stored.
 * Bodies: JSON (plausible, wrong, malformed), deep JSON, odd path encodings, and multipart
 * bodies complete, truncated, cut off or over the limits.
 *   FUZZ_RUNS=100000 FUZZ_SEED=<int> [FUZZ_MAX_SECONDS=<s>] npm run fuzz
 * FUZZ_MAX_SECONDS stops after the batch that crosses it (the cases run are reported).
 * Writes bench/results/fuzz-last.json and prints a summary line.
 */
import fc from 'fast-check';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT_DIR } from '../src/db/migrate.js';
import { dropOrphanTestDatabases, ensureTemplate } from '../test/helpers/template.js';
import { startTestEnv } from '../test/helpers/server.js';
import { installWriteJournal, writeJournalMark } from '../test/helpers/fingerprint.js';
import {
  caseArbitrary, fuzzAccountStates, fuzzOperations, fuzzTokens, processFailureCount, restoreFuzzAccounts, runFuzzCase, type FuzzFailure,
} from '../test/helpers/fuzz-run.js';

const runs = Number(process.env.FUZZ_RUNS ?? 100_000);
const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2_147_483_647);
const maxSeconds = process.env.FUZZ_MAX_SECONDS ? Number(process.env.FUZZ_MAX_SECONDS) : Infinity;
const BATCH = 1000;
let casesRun = 0;

await dropOrphanTestDatabases();
const template = await ensureTemplate();
const env = await startTestEnv({ template });
// Each case's "changed nothing" check reads the write journal's mark instead of hashing every row
// (test/helpers/fingerprint.ts; test/api/fuzz.test.ts proves the two agree).
await installWriteJournal(env.db);
const started = Date.now();
const failures: FuzzFailure[] = [];
const problemCounts: Record<string, number> = {};
const shapeCounts: Record<string, number> = {};
try {
  const accounts = await fuzzAccountStates(env);
  let tokens = await fuzzTokens(env);
  const operations = await fuzzOperations(env);
  const arbitrary = caseArbitrary(operations);
  for (let done = 0; done < runs && (Date.now() - started) / 1000 < maxSeconds; done += BATCH) {
    const cases = fc.sample(arbitrary, { seed: seed + done, numRuns: Math.min(BATCH, runs - done) });
    for (const c of cases) {
      const shape = c.shape.kind === 'multipart' ? `multipart-${c.shape.ending}${c.shape.overflow === 'none' ? '' : `-${c.shape.overflow}`}` : c.shape.kind;
      shapeCounts[shape] = (shapeCounts[shape] ?? 0) + 1;
      const failure = await runFuzzCase(env, tokens, c, writeJournalMark);
      casesRun += 1;
      if (failure) {
        failures.push(failure);
        const problem = failure.problem.replace(/ \(.*$/, '');
        problemCounts[problem] = (problemCounts[problem] ?? 0) + 1;
      }
    }
    // A generated request may close an account or change a password: reopen the fuzz
    // accounts with their passwords and log in again, so later cases still test the rules.
    await restoreFuzzAccounts(env, accounts);
    tokens = await fuzzTokens(env);
    const elapsed = (Date.now() - started) / 1000;
    process.stdout.write(`\r${casesRun}/${runs} cases, ${failures.length} failures, ${elapsed.toFixed(0)} s`);
  }
  process.stdout.write('\n');
  const summary = {
    date: new Date().toISOString(),
    seed,
    runs: casesRun,
    requestedRuns: runs,
    operations: operations.length,
    seconds: Math.round((Date.now() - started) / 1000),
    failures: failures.length,
    serverErrors: problemCounts['server error'] ?? 0,
    processExits: processFailureCount(),
    halfWrites: (problemCounts['refused request changed the database'] ?? 0) + (problemCounts['refused request changed the stored files'] ?? 0),
    leftOpenUploads: problemCounts['upload left a .part file or an open descriptor'] ?? 0,
    problems: problemCounts,
    shapes: shapeCounts,
    distinctFailures: [...new Map(failures.map((f) => [`${f.case.op.method} ${f.case.op.path} ${f.problem}`, f])).values()].slice(0, 50),
  };
  await mkdir(path.join(ROOT_DIR, 'bench/results'), { recursive: true });
  await writeFile(path.join(ROOT_DIR, 'bench/results/fuzz-last.json'), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`fuzz: ${casesRun} cases over ${operations.length} write operations, seed ${seed}, ${summary.seconds} s, ${failures.length} failures ` +
    `(5xx ${summary.serverErrors}, process exits ${summary.processExits}, half-writes ${summary.halfWrites}, uploads left open ${summary.leftOpenUploads})`);
  process.exitCode = failures.length === 0 ? 0 : 1;
} finally {
  await env.close();
}
