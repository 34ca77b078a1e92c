/**
 * The bench run as a child process by the tools that compare runs (bench/against.ts for an earlier
 * commit's checkout, bench/variants.ts for copies of the dataset): `npm run bench` with a label,
 * its report read back and its result files removed.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { BenchReport } from './report.js';

/** Runs a command in `cwd` (its output passed through, or only its errors when `quiet`); rejects on a non-zero exit. */
export function runCommand(command: string, commandArgs: string[], cwd: string, quiet = false): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${commandArgs.join(' ')} (in ${cwd}) ended with ${signal ?? code}`)));
  });
}

/** `npm run bench -- <benchArgs> --no-md --label <label>` in `cwd`; the report it wrote, whose files are then removed. */
export async function runBenchChild(cwd: string, benchArgs: string[], label: string, quiet = false): Promise<BenchReport> {
  await runCommand('npm', ['run', 'bench', '--', ...benchArgs, '--no-md', '--label', label], cwd, quiet);
  const file = path.join(cwd, 'bench/results', `${label}.json`);
  const report = JSON.parse(await readFile(file, 'utf8')) as BenchReport;
  await rm(file, { force: true });
  await rm(file.replace(/\.json$/, '.md'), { force: true });
  return report;
}
