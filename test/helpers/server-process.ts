/**
 * A real server process (src/cli/server-process.ts, as `npm start` forks it with
 * WEB_CONCURRENCY) on a port of its own: the multi-process test and the scale-out bench
 * start several on one database.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { freePort } from './free-port.js';

export interface ServerProcessHandle {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

// node_modules/.bin first on PATH: its `node` (Node 22, the native modules' ABI), as `npm run` does.
const BIN_DIR = path.join(ROOT_DIR, 'node_modules/.bin');
const TSX = path.join(BIN_DIR, 'tsx');
const SCRIPT = path.join(ROOT_DIR, 'src/cli/server-process.ts');

/** Starts one process with `env` (DATABASE_URL, AUTH_DATABASE_URL, JWT_SECRET...) on a free port. */
export async function startServerProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcessHandle> {
  const port = String(await freePort());
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, [SCRIPT], {
      cwd: ROOT_DIR,
      env: { PATH: `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? '/tmp', PORT: port, HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server process did not start in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.stdout.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
      const ready = /\{"ready":"([^"]+)"/.exec(output);
      if (!ready) return;
      clearTimeout(timer);
      resolve({
        url: ready[1]!,
        pid: child.pid!,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(force);
        },
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server process exited (code ${code}):\n${output}`));
    });
  });
}
