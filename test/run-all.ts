/**
 * `npm test`: type check, the vitest suite (HTTP against real PostgreSQL) and the pgTAP
 * suite. Ends with one plain line "N passed, N failed" read by CI.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { ROOT_DIR } from '../src/db/migrate.js';
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

console.log('== Type check');
const typecheck = await run(bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']);
if (typecheck === 0) passed += 1;
else failed += 1;

console.log('== vitest');
const report = path.join(ROOT_DIR, '.vitest-results.json');
await rm(report, { force: true });
const vitestCode = await run(bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`]);
try {
  const results = JSON.parse(await readFile(report, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    testResults: Array<{ status: string }>;
  };
  passed += results.numPassedTests;
  failed += results.numFailedTests;
  // A file that fails to load has no failed test but a failed status.
  failed += results.testResults.filter((file) => file.status === 'failed').length && results.numFailedTests === 0 ? 1 : 0;
} catch {
  failed += 1;
}
if (vitestCode !== 0 && failed === 0) failed += 1;

console.log('== pgTAP');
try {
  const pgtap = await runPgTap();
  passed += pgtap.passed;
  failed += pgtap.failed;
} catch (error) {
  console.error(error);
  failed += 1;
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
