/**
 * Child processes of the bench (the service, the bare server): started with Node's own
 * executable and tsx's loader (no wrapper process, so the pid is the server's and its RSS
 * is the server's), ready when they send {ready, url} over IPC, stopped on exit whatever
 * happens to the parent.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from '../../src/db/migrate.js';

export interface Child {
  name: string;
  url: string;
  pid: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

const running = new Set<Child>();

function killAll(): void {
  for (const child of running) {
    try {
      child.process.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}

/** `loader: false`: a JavaScript script run by Node alone (the compiled service, bench/server-compiled.mjs). */
export async function startChild(name: string, script: string, env: NodeJS.ProcessEnv, { loader = true } = {}): Promise<Child> {
  const child = fork(path.join(ROOT_DIR, script), [], {
    cwd: ROOT_DIR,
    env,
    execArgv: loader ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: not ready after 60 s`)), 60_000);
    child.once('message', (message: { ready?: boolean; url?: string }) => {
      clearTimeout(timer);
      if (message.ready && message.url) resolve(message.url);
      else reject(new Error(`${name}: unexpected message ${JSON.stringify(message)}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with code ${code} before it was ready`));
    });
  });
  const handle: Child = {
    name,
    url,
    pid: child.pid!,
    process: child,
    async stop() {
      running.delete(handle);
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
        }, 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      });
    },
  };
  running.add(handle);
  return handle;
}

/** The child's process.memoryUsage() in MB (bench/server.ts answers over IPC), or null. */
export function memoryOf(child: Child): Promise<Record<string, number> | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.process.off('message', listener);
      resolve(null);
    }, 2000);
    const listener = (message: { memory?: Record<string, number> }) => {
      if (!message?.memory) return;
      clearTimeout(timer);
      child.process.off('message', listener);
      resolve(Object.fromEntries(Object.entries(message.memory).map(([k, v]) => [k, Math.round((v / 1048576) * 10) / 10])));
    };
    child.process.on('message', listener);
    child.process.send({ memory: true });
  });
}

/** Resident set size of a process in MB (VmRSS of /proc/<pid>/status), or null when gone. */
export function rssMb(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

/**
 * CPU time a process has used so far, user + system, in ms (fields 14 and 15 of /proc/<pid>/stat,
 * in clock ticks of 10 ms), or null when gone.
 */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name in parentheses (which may hold spaces): state is field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every 250 ms until stopped; returns the peak. */
export function sampleRss(pid: number): { stop(): number | null } {
  let peak: number | null = rssMb(pid);
  const timer = setInterval(() => {
    const value = rssMb(pid);
    if (value !== null && (peak === null || value > peak)) peak = value;
  }, 250);
  return {
    stop() {
      clearInterval(timer);
      const value = rssMb(pid);
      if (value !== null && (peak === null || value > peak)) peak = value;
      return peak;
    },
  };
}
