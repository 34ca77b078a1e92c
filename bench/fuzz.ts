/**
 * `npm run fuzz`: the long fuzz run (default 100 000 cases) over every write route of the
 * OpenAPI document, with the properties of test/api/fuzz.test.ts: no 5xx, every 400 keyed by
 * field or non_field_errors, the database unchanged after each refused request.
 *   FUZZ_RUNS=100000 FUZZ_SEED=<int> npm run fuzz
 * Writes bench/results/fuzz-last.json and prints a summary line.
 */
import fc from 'fast-check';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT_DIR } from '../src/db/migrate.js';
import { dropOrphanTestDatabases, ensureTemplate } from '../test/helpers/template.js';
import { startTestEnv } from '../test/helpers/server.js';
import { caseArbitrary, fuzzOperations, fuzzTokens, runFuzzCase, type FuzzFailure } from '../test/helpers/fuzz-run.js';

const runs = Number(process.env.FUZZ_RUNS ?? 100_000);
const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2_147_483_647);
const BATCH = 1000;

await dropOrphanTestDatabases();
const template = await ensureTemplate();
const env = await startTestEnv({ template });
const started = Date.now();
const failures: FuzzFailure[] = [];
const statusCounts: Record<string, number> = {};
try {
  let tokens = await fuzzTokens(env);
  const operations = await fuzzOperations(env);
  const arbitrary = caseArbitrary(operations);
  for (let done = 0; done < runs; done += BATCH) {
    const cases = fc.sample(arbitrary, { seed: seed + done, numRuns: Math.min(BATCH, runs - done) });
    for (const c of cases) {
      const failure = await runFuzzCase(env, tokens, c);
      if (failure) {
        failures.push(failure);
        statusCounts[String(failure.status)] = (statusCounts[String(failure.status)] ?? 0) + 1;
      }
    }
    // A generated request may close an account or change a password: log in again each batch.
    tokens = await fuzzTokens(env).catch(() => tokens);
    const elapsed = (Date.now() - started) / 1000;
    process.stdout.write(`\r${Math.min(done + BATCH, runs)}/${runs} cases, ${failures.length} failures, ${elapsed.toFixed(0)} s`);
  }
  process.stdout.write('\n');
  const summary = {
    date: new Date().toISOString(),
    seed,
    runs,
    operations: operations.length,
    seconds: Math.round((Date.now() - started) / 1000),
    failures: failures.length,
    distinctFailures: [...new Map(failures.map((f) => [`${f.case.op.method} ${f.case.op.path} ${f.problem}`, f])).values()].slice(0, 50),
  };
  await mkdir(path.join(ROOT_DIR, 'bench/results'), { recursive: true });
  await writeFile(path.join(ROOT_DIR, 'bench/results/fuzz-last.json'), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`fuzz: ${runs} cases over ${operations.length} write operations, seed ${seed}, ${summary.seconds} s, ${failures.length} failures`);
  process.exitCode = failures.length === 0 ? 0 : 1;
} finally {
  await env.close();
}
