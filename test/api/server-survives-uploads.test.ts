/**
 * The real server (`npm start` with DATABASE_URL), as its own process, survives multipart
 * bodies cut short (issue 11, finding 1): it still answers /api/health/ afterwards, leaves
 * no .part file, and holds no more descriptors than before (counted in /proc/<pid>/fd).
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ROLES } from '../../src/db/roles.js';
import { makeClient } from '../helpers/http.js';
import { eventually, multipartBody, openDescriptors, partFiles, rawRequest, socketEndpoints } from '../helpers/raw-http.js';
import { FIXTURE_PASSWORD, databaseUrl } from '../helpers/settings.js';
import { cloneTemplate } from '../helpers/template.js';
import { PDF } from './absence-helpers.js';
import { RunningCommand, SCRIPTS, commandEnv, freePort } from './cli-helpers.js';

const cleanups: Array<() => Promise<void>> = [];
let command: RunningCommand;
let url: string;
let serverPid: number;
let storageDir: string;
let token: string;

/** tsx runs the script in a child process of its own: the server is the descendant running start.ts. */
async function serverProcess(wrapperPid: number): Promise<number> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent !== wrapperPid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('start.ts')) return Number(entry);
  }
  return wrapperPid;
}

beforeAll(async () => {
  const database = await cloneTemplate(inject('templateDatabase'));
  cleanups.push(database.drop);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'wfm-survive-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  storageDir = path.join(dataDir, 'storage');
  const port = await freePort();
  command = new RunningCommand(SCRIPTS.start, [], commandEnv({
    DATABASE_URL: databaseUrl(database.name),
    AUTH_DATABASE_URL: databaseUrl(database.name, ROLES.authenticator),
    JWT_SECRET: 'a-test-secret-of-at-least-thirty-two-characters',
    DATA_DIR: dataDir,
    STORAGE_DIR: storageDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    GRAPHQL: 'off',
    WORKER: 'off',
  }));
  await command.waitFor(/Press Ctrl\+C to stop\./);
  url = `http://127.0.0.1:${port}`;
  serverPid = await serverProcess(command.child.pid!);
  const login = await makeClient(url).post('/api/auth/token/', null, { username: 'alice', password: FIXTURE_PASSWORD });
  expect(login.status, login.text).toBe(200);
  token = login.body.access;
}, 120_000);

afterAll(async () => {
  await command?.stop().catch(() => undefined);
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

const upload = (body: Buffer, contentType: string, extra: { contentLength?: number; then?: 'wait' | 'abort' } = {}) =>
  rawRequest(url, {
    method: 'POST',
    path: '/api/absences/1/documents/',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body,
    ...extra,
  });

describe('npm start, as its own process, under multipart bodies cut short', () => {
  it('keeps answering, leaves no .part file and no extra descriptor', { timeout: 60_000 }, async () => {
    const file = Buffer.concat([PDF, Buffer.alloc(200_000, 0x20)]);
    // Warm up the paths the bad bodies take (pool connections, storage directories).
    const complete = multipartBody('add_documents', 'ok.pdf', file);
    expect((await upload(complete.body, complete.contentType))?.status).toBeLessThan(500);
    const before = (await openDescriptors(serverPid)).length;
    const beforeSockets = await socketEndpoints(serverPid);
    const beforeDescribed = (await openDescriptors(serverPid)).map((target) => beforeSockets[target] ? `${target} ${beforeSockets[target]}` : target);

    for (let i = 0; i < 5; i += 1) {
      const truncatedFile = multipartBody('add_documents', 'cut.pdf', file, false);
      expect((await upload(truncatedFile.body, truncatedFile.contentType))?.status).toBe(400);
      const truncatedField = multipartBody('comment', 'cut.pdf', file, false);
      expect((await upload(truncatedField.body, truncatedField.contentType))?.status).toBe(400);
      const aborted = multipartBody('add_documents', 'gone.pdf', file, false);
      await upload(aborted.body, aborted.contentType, { contentLength: aborted.body.length + 5_000_000, then: 'abort' });
    }

    // Connection: close, as the uploads: a kept-alive client socket would count as a descriptor.
    const health = await rawRequest(url, { method: 'GET', path: '/api/health/' });
    expect(health?.status, command.output).toBe(200);
    // A request still finishing when the next one came may have grown the database pool by one
    // connection: node-postgres closes an idle one after 10 s (idleTimeoutMillis), so wait past that.
    const released = await eventually(async () => {
      const descriptors = await openDescriptors(serverPid);
      return descriptors.length <= before && !descriptors.some((target) => target.startsWith(storageDir))
        && (await partFiles(storageDir)).length === 0;
    }, 15_000);
    const sockets = await socketEndpoints(serverPid);
    const described = (await openDescriptors(serverPid)).map((target) => sockets[target] ? `${target} ${sockets[target]}` : target);
    expect(released, `descriptors ${JSON.stringify(described)} (before: ${JSON.stringify(beforeDescribed)}), ` +
      `part files ${JSON.stringify(await partFiles(storageDir))}`).toBe(true);
    expect(command.child.exitCode).toBeNull();
  });
});
