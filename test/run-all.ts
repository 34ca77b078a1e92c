/**
 * `npm test`: type check, the layering check, the sql/ drift check, the web application build and its layer check, the vitest suite (HTTP against real
 * PostgreSQL, and the browser tests of test/web), the pgTAP suite and a short fault-injection run
 * (bench/chaos.ts). Ends with one plain line "N passed, N failed" read by CI.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { ROOT_DIR } from '../src/db/migrate.js';
import { driftCheck } from '../src/db/sql-source.js';
import { TEST_ROOT_URL } from './helpers/settings.js';
import { runPgTap } from './run-pgtap.js';

function run(command: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT_DIR, stdio: 'inherit', env: process.env });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const bin = (name: string) => path.join(ROOT_DIR, 'node_modules/.bin', name);
let passed = 0;
let failed = 0;
/** What failed, printed again just above the closing line: CI keeps only the end of the output. */
const failures: string[] = [];

/** Counts one check: passed, or failed as `failure` says. */
function check(ok: boolean, failure: string): void {
  if (ok) passed += 1;
  else {
    failed += 1;
    failures.push(failure);
  }
}

/** Counts a step's exit code as one check. */
const step = (name: string, code: number) => check(code === 0, `${name} (exit code ${code})`);

console.log('== Type check');
step('Type check', await run(bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']));

// The direction of imports (docs/architecture.md, "Layers"; .dependency-cruiser.cjs): src/db imports
// nothing above it, src/auth not the back-office, src/ and worker/ neither bench/ nor test/, no cycles.
console.log('== Layers (dependency-cruiser)');
step('Layers', await run(bin('depcruise'), ['--config', '.dependency-cruiser.cjs', 'src', 'worker', 'bench', 'test']));

// sql/ is the source: the migrations must produce what it defines (docs/architecture.md, "Migrations").
// CI sets WFM_REQUIRE_COMMITTED_MIGRATIONS=1: there, an uncommitted current.sql fails too.
console.log('== sql/ drift check');
try {
  const started = Date.now();
  const problem = await driftCheck(
    { root: ROOT_DIR, rootUrl: TEST_ROOT_URL },
    { requireCommitted: process.env.WFM_REQUIRE_COMMITTED_MIGRATIONS === '1' },
  );
  if (problem) console.error(problem);
  else console.log(`sql/ and the migrations agree (${((Date.now() - started) / 1000).toFixed(1)} s).`);
  check(!problem, 'sql/ drift check');
} catch (error) {
  console.error(`sql/ drift check: ${(error as Error).message}`);
  check(false, 'sql/ drift check');
}

// The web application: its own type check (against the generated API types) and its build, which
// the browser tests of test/web (run by vitest) load.
console.log('== Web application build');
step('Web application build', await run('npm', ['run', '--silent', 'web:build']));

// Its layers (web/.dependency-cruiser.cjs): a feature imports no other feature, shared code no
// feature or screen, no import cycle.
console.log('== Web application layers (dependency-cruiser)');
step('Web application layers', await run(bin('depcruise'), ['--config', 'web/.dependency-cruiser.cjs', 'web/src']));

/** One vitest run over `dir`; its counts join the totals (a file that fails to load counts as a failure). */
async function vitest(dir: string): Promise<void> {
  const report = path.join(ROOT_DIR, '.vitest-results.json');
  await rm(report, { force: true });
  const code = await run(bin('vitest'), ['run', dir, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`]);
  let runFailed = 0;
  try {
    const results = JSON.parse(await readFile(report, 'utf8')) as {
      numPassedTests: number;
      numFailedTests: number;
      testResults: Array<{ name: string; status: string; message?: string; assertionResults: Array<{ fullName: string; status: string }> }>;
    };
    passed += results.numPassedTests;
    runFailed += results.numFailedTests;
    for (const file of results.testResults) {
      const where = path.relative(ROOT_DIR, file.name);
      const failedTests = file.assertionResults.filter((test) => test.status === 'failed');
      for (const test of failedTests) failures.push(`${where}: ${test.fullName}`);
      // A file that fails to load has no failed test but a failed status.
      if (file.status === 'failed' && failedTests.length === 0) failures.push(`${where}: ${(file.message ?? 'failed to run').split('\n')[0]}`);
    }
    runFailed += results.testResults.filter((file) => file.status === 'failed').length && results.numFailedTests === 0 ? 1 : 0;
  } catch {
    runFailed += 1;
    failures.push(`vitest ${dir}: no report`);
  }
  if (code !== 0 && runFailed === 0) {
    runFailed += 1;
    failures.push(`vitest ${dir} (exit code ${code})`);
  }
  failed += runFailed;
}

// Each test file writes how many answers it checked against the OpenAPI document (test/helpers/response-contract.ts).
const contractCounts = path.join(ROOT_DIR, 'test-results', 'response-contract');
await rm(contractCounts, { recursive: true, force: true });

// The HTTP suite first, then the browser walks: Chromium does not compete with the timed API tests.
console.log('== vitest (API)');
await vitest('test/api/');
console.log('== vitest (web application, in Chromium)');
await vitest('test/web/');

try {
  let answers = 0;
  let results = 0;
  const files = await readdir(contractCounts);
  for (const file of files) {
    const counts = JSON.parse(await readFile(path.join(contractCounts, file), 'utf8')) as { checked: number; functionResults?: number };
    answers += counts.checked;
    results += counts.functionResults ?? 0;
  }
  console.log(`${answers} HTTP answers of ${files.length} test files matched the OpenAPI document (status, content type, body).`);
  console.log(`${results} results of API functions called through GraphQL and the back-office matched their routes' schemas.`);
} catch {
  console.log('No count of answers checked against the OpenAPI document was written.');
}

console.log('== pgTAP');
try {
  const pgtap = await runPgTap();
  passed += pgtap.passed;
  failed += pgtap.failed;
  if (pgtap.failed > 0) failures.push(`pgTAP: ${pgtap.failed} failed (see its summary above)`);
} catch (error) {
  console.error(error);
  check(false, 'pgTAP: did not run');
}

// Fault injection on a short setting (issue 15; BENCHMARKS.md "Faults" for the long run): its own
// embedded PostgreSQL restarted (fast and immediate), the service killed once, backends terminated,
// connections exhausted. It fails on any lost or half-written write or unexpected 5xx.
console.log('== Fault injection (npm run chaos, short setting)');
const chaos = await run(bin('tsx'), [
  'bench/chaos.ts', '--duration=75', '--restarts=4', '--kills=1', '--terminations=1', '--exhaustions=1',
  '--output=test-results/chaos.json',
]);
step('Fault injection', chaos);

if (failures.length > 0) {
  console.log('== What failed');
  for (const failure of failures) console.log(`- ${failure}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
