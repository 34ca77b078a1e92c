/**
 * `npm run org:import -- FILE.json`: loads an organisation file (CONTRACT section 6) into
 * the DATABASE_URL database in one transaction. The last output line is one JSON object:
 * each section's key → id map. A bad file loads nothing, prints "path: message" on stderr
 * and exits 1.
 */
import '../check-node.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ImportError, importOrganisation } from '../org/import.js';
import { findJsonSyntaxError } from './json-syntax.js';
import { withClient } from '../db/client.js';
import { CliError, cliSessionOptions, requireDatabaseUrl, runCommand } from './common.js';

const USAGE = 'usage: npm run org:import -- FILE.json';

async function readOrganisationFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (error as Error).message;
    throw new CliError(`cannot read ${file}: ${reason}`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (error) {
    const problem = findJsonSyntaxError(text);
    if (!problem) throw new CliError(`${file}: invalid JSON: ${(error as Error).message}`);
    throw new CliError(`${file}: invalid JSON at line ${problem.line}, column ${problem.column}: ${problem.message}`);
  }
}

runCommand('org:import', async () => {
  const args = process.argv.slice(2).filter((arg) => arg !== '--');
  if (args.length !== 1 || args[0]!.startsWith('-')) throw new CliError(USAGE);
  const file = path.resolve(args[0]!);
  const databaseUrl = requireDatabaseUrl(process.env, 'org:import');
  const document = await readOrganisationFile(args[0]!);

  const result = await withClient(databaseUrl, cliSessionOptions(process.env), async (client) => {
    await client.query('begin');
    try {
      const ids = await importOrganisation(client, document as Record<string, unknown>);
      await client.query('commit');
      return ids;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      if (error instanceof ImportError) throw new CliError(`${error.message}\nNothing was imported from ${file}.`);
      throw error;
    }
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
});
