/**
 * `npm start` (through src/cli/start.ts): serves the API, the back-office and the documentation on PORT (8000).
 *
 * - Without DATABASE_URL: an embedded PostgreSQL kept in DATA_DIR (./.data), created on
 *   first run and reused afterwards; its secrets (superuser and wfm_authenticator passwords,
 *   JWT_SECRET, demo password) are generated once in DATA_DIR/secrets.json (0600). The
 *   database is migrated, the demo organisation is loaded while it holds no establishment,
 *   and queued e-mails are printed to the console.
 * - With DATABASE_URL: JWT_SECRET is required; the roles are ensured and the database
 *   migrated. Demo data only with DEMO_DATA=1 and a database holding no organisation.
 */
import path from 'node:path';
import type pg from 'pg';
import type { Logger } from 'pino';
import { loadConfig, type Config } from '../config.js';
import { createLogger } from '../log.js';
import { withClient } from '../db/client.js';
import { connectionUrl, DEFAULT_EMBEDDED_PORT, EMBEDDED_SUPERUSER, startEmbeddedDatabase } from '../db/embedded.js';
import { sessionOptions } from '../db/pool.js';
import { waitForDatabase } from '../db/reachable.js';
import { ROLES } from '../db/roles.js';
import { DEMO_LOGINS, type DemoLogin } from '../org/demo.js';
import { FileStorage } from '../storage/storage.js';
import { INPUT_CONTRACT } from '../http/input-contract.js';
import { CliError, dataDirFrom, ensureServiceRoles, holdsOrganisation, migrate, runCommand } from './common.js';
import { OutboxPrinter } from './outbox-printer.js';
import { closeServer } from './server-process.js';
import { processCount, startServerProcesses } from './server-processes.js';
import { SecretStore } from './secrets.js';

const log = (line = '') => console.log(line);

/**
 * START_PHASES=1: the start-up's phases, in milliseconds since the process started (Node's
 * performance clock), printed after the ready lines (BENCHMARKS.md, "Start-up").
 */
const phases: Array<[string, number]> = [['start-up modules loaded', performance.now()]];
const phase = (name: string) => phases.push([name, performance.now()]);

/**
 * The HTTP application's modules (Express, the routes, the back-office: most of a start's CPU),
 * imported while the database is reached and its migration checked, which mostly wait for
 * PostgreSQL (BENCHMARKS.md, "Start-up (issue 31)").
 */
let serverModule: Promise<typeof import('../server.js')> | null = null;
const loadServer = () => (serverModule ??= import('../server.js'));
/**
 * graphile-worker's modules, loaded the same way: loaded only after listening, their evaluation
 * (one synchronous block) held the first /api/health/ answer back by as long.
 */
let workerModule: Promise<typeof import('../../worker/runner.js')> | null = null;
const loadWorker = () => (workerModule ??= import('../../worker/runner.js'));

function flag(value: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((value ?? '').toLowerCase());
}

function embeddedPort(env: NodeJS.ProcessEnv): number {
  const raw = env.EMBEDDED_PG_PORT;
  if (raw === undefined || raw === '') return DEFAULT_EMBEDDED_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new CliError(`EMBEDDED_PG_PORT must be a port number between 1 and 65535 (got "${raw}").`);
  }
  return port;
}

/** Shutdown steps, run last-registered first: the server stops before its database. */
class Shutdown {
  private readonly steps: Array<{ name: string; run: () => Promise<void> }> = [];
  private running: Promise<void> | null = null;

  add(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
        } catch (error) {
          console.error(`start: stopping ${step.name} failed: ${(error as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

interface DemoOutcome {
  loaded: boolean;
  invitations: number;
}

/** Loads the demo organisation and its year of history in one transaction (src/org/demo-history.ts). */
async function loadDemo(client: pg.ClientBase, config: Config, password: string): Promise<DemoOutcome> {
  // Loaded only to load the demo (once per database): not on a restart.
  const { loadDemoOrganisation } = await import('../org/demo-history.js');
  const loaded = await loadDemoOrganisation(client, {
    password,
    timeZone: config.businessTimeZone,
    storage: new FileStorage(config.storageDir),
    maxFileBytes: INPUT_CONTRACT.documentMaxBytes,
  });
  const history = loaded.history;
  if (history) {
    log(
      `Demo history: ${history.steps} steps in ${(history.milliseconds / 1000).toFixed(1)} s (${history.absences} absences, ` +
        `${history.shiftChanges} day-change requests, ${history.documents} documents, ${history.notificationsRead} notifications read).`,
    );
  } else {
    log(`Demo history not loaded: the database user may not become ${ROLES.visitor}, whose requests it replays.`);
  }
  return { loaded: true, invitations: loaded.invitations };
}

/** The demo logins present (and active) in the database. */
async function presentDemoLogins(client: pg.ClientBase): Promise<DemoLogin[]> {
  const { rows } = await client.query<{ username: string }>(
    'select username from app_public.accounts where is_active and username = any($1::text[])',
    [DEMO_LOGINS.map((login) => login.username)],
  );
  const present = new Set(rows.map((row) => row.username));
  return DEMO_LOGINS.filter((login) => present.has(login.username));
}

function printLogins(logins: DemoLogin[], password: string): void {
  if (logins.length === 0) return;
  const width = Math.max(...logins.map((login) => login.username.length), 'username'.length) + 2;
  const roleWidth = Math.max(...logins.map((login) => login.role.length), 'role'.length) + 2;
  log('  Demo logins:');
  log(`    ${'username'.padEnd(width)}${'role'.padEnd(roleWidth)}password`);
  for (const login of logins) log(`    ${login.username.padEnd(width)}${login.role.padEnd(roleWidth)}${password}`);
}

runCommand('start', async () => {
  const env = process.env;
  const dataDir = dataDirFrom(env);
  const storageDir = path.resolve(env.STORAGE_DIR || path.join(dataDir, 'storage'));
  const secrets = new SecretStore(dataDir);
  const shutdown = new Shutdown();
  const embeddedMode = !env.DATABASE_URL;

  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      console.error(`start: ${signal} again, exiting without waiting.`);
      process.exit(1);
    }
    stopping = true;
    log(`\n${signal} received: stopping...`);
    void shutdown.run().then(() => {
      log('Stopped.');
      process.exit(0);
    });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const processes = processCount(env);
    // One server process: this one (WEB_CONCURRENCY > 1: the server processes load it themselves).
    // A failure is reported where it is awaited.
    if (processes <= 1) loadServer().catch(() => undefined);
    if ((env.WORKER ?? '').toLowerCase() !== 'off') loadWorker().catch(() => undefined);
    let config: Config;
    let databaseLabel: string;
    if (!embeddedMode) {
      // Refuses without JWT_SECRET, saying so.
      config = loadConfig(env, { storageDir });
      // A database restarting or not up yet is waited for (a supervisor may start both at once).
      await waitForDatabase(config.databaseUrl, { log });
      await withClient(config.databaseUrl, sessionOptions(config), async (client) => {
        await ensureServiceRoles(client);
        if (config.authDatabaseUrl === config.databaseUrl) {
          // Requests then run on owner connections, which must be able to become the visitor.
          const { rows } = await client.query<{ user: string; ok: boolean }>(
            `select current_user as "user", pg_has_role(current_user, '${ROLES.visitor}', 'member') as ok`,
          );
          if (!rows[0]!.ok) {
            throw new CliError(
              `The requests would run as "${rows[0]!.user}", which may not switch to the role ${ROLES.visitor}. ` +
                `Set AUTH_DATABASE_URL to the ${ROLES.authenticator} login (give it a password: ALTER ROLE ` +
                `${ROLES.authenticator} PASSWORD '...'), or connect as a superuser.`,
            );
          }
        }
      });
      databaseLabel = 'DATABASE_URL';
    } else {
      const port = embeddedPort(env);
      const generated = await secrets.get('postgres_password', 'authenticator_password', 'jwt_secret');
      config = loadConfig(env, {
        databaseUrl: connectionUrl(EMBEDDED_SUPERUSER, generated.postgres_password, port),
        authDatabaseUrl: connectionUrl('wfm_authenticator', generated.authenticator_password, port),
        jwtSecret: env.JWT_SECRET || generated.jwt_secret,
        storageDir,
        // The demo's console: short human lines (src/log.ts), unless LOG_FORMAT says otherwise.
        ...(env.LOG_FORMAT ? {} : { logFormat: 'human' as const }),
      });
      const clusterDir = path.join(dataDir, 'pg');
      log(`Starting the embedded PostgreSQL (${clusterDir}, 127.0.0.1:${port})...`);
      const embedded = await startEmbeddedDatabase(dataDir, {
        clusterDir,
        port,
        superuserPassword: generated.postgres_password,
        authenticatorPassword: generated.authenticator_password,
        logFile: path.join(dataDir, 'postgres.log'),
      });
      shutdown.add('the embedded PostgreSQL', embedded.stop);
      log(embedded.created ? 'Created a new embedded database cluster.' : 'Reusing the embedded database cluster.');
      databaseLabel = `embedded PostgreSQL, data in ${clusterDir} (127.0.0.1:${port}, log ${path.join(dataDir, 'postgres.log')})`;
    }

    phase('database reached, roles ensured');
    await migrate(config.databaseUrl, log);
    log('Database migrated.');
    phase('migrated');

    // Demo organisation: embedded databases get it while they hold no establishment; a
    // DATABASE_URL database only on request (DEMO_DATA=1) and when it holds no organisation.
    const { demo, logins, demoPassword } = await withClient(config.databaseUrl, sessionOptions(config), async (client) => {
      let outcome: DemoOutcome = { loaded: false, invitations: 0 };
      let password: string | null = null;
      if (embeddedMode) {
        const { rows } = await client.query<{ any: boolean }>('select exists (select 1 from app_public.establishments) as any');
        if (!rows[0]!.any) {
          password = (await secrets.get('demo_password')).demo_password;
          log('Loading the demo organisation...');
          outcome = await loadDemo(client, config, password);
        } else {
          password = await secrets.peek('demo_password');
        }
      } else if (flag(env.DEMO_DATA)) {
        if (await holdsOrganisation(client)) {
          log('DEMO_DATA is set but the database already holds an organisation: no demo data loaded.');
        } else {
          password = (await secrets.get('demo_password')).demo_password;
          log('Loading the demo organisation (DEMO_DATA)...');
          outcome = await loadDemo(client, config, password);
        }
      }
      // Embedded: the demo logins on every start; DATABASE_URL: only right after loading them.
      const shown = password && (embeddedMode || outcome.loaded) ? await presentDemoLogins(client) : [];
      return { demo: outcome, logins: shown, demoPassword: password };
    });
    if (demo.loaded) {
      log(
        `Demo organisation loaded.${demo.invitations > 0 ? ` ${demo.invitations} invitation e-mails were queued for the other employees (not printed).` : ''}`,
      );
    } else if (embeddedMode) {
      log('The database already holds an organisation: demo data not loaded.');
    }

    phase('demo data checked');
    const host = env.HOST || '0.0.0.0';
    // WEB_CONCURRENCY > 1: that many server processes share the port (src/cli/server-processes.ts);
    // the worker and the embedded database stay in this process, once.
    let serverUrl: string;
    let logger: Logger;
    if (processes > 1) {
      const group = await startServerProcesses(processes, {
        ...env, DATABASE_URL: config.databaseUrl, AUTH_DATABASE_URL: config.authDatabaseUrl, JWT_SECRET: config.jwtSecret,
        STORAGE_DIR: storageDir, PORT: String(config.port), HOST: host, PUBLIC_URL: config.publicUrl,
        LOG_FORMAT: config.logFormat, LOG_LEVEL: config.logLevel,
      }, log);
      shutdown.add('the server processes', group.stop);
      serverUrl = group.url;
      logger = createLogger(config);
    } else {
      const { createApp } = await loadServer();
      phase('application modules loaded');
      const app = await createApp(config);
      phase('application built (manifest checked)');
      const running = await app.listen(config.port, host);
      phase('listening');
      shutdown.add('the HTTP server', () => closeServer(running));
      serverUrl = running.url;
      logger = app.logger;
    }

    // Background jobs run in-process (reminders, audit purge, e-mails, counters), unless
    // WORKER=off (e.g. when `npm run worker` runs as its own process). Registered after the
    // HTTP server, so it stops first.
    // graphile-worker (loaded while the database was reached) starts once the service listens.
    if ((env.WORKER ?? '').toLowerCase() !== 'off') {
      const { startWorker } = await loadWorker();
      const worker = await startWorker({
        databaseUrl: config.databaseUrl,
        businessTimeZone: config.businessTimeZone,
        publicUrl: config.publicUrl,
        logger,
      });
      shutdown.add('the worker', () => worker.stop());
    }

    if (embeddedMode) {
      const printer = new OutboxPrinter(config.databaseUrl, (text) => process.stdout.write(`${text}\n`));
      await printer.start();
      shutdown.add('the e-mail printer', () => printer.stop());
    }

    const port = new URL(serverUrl).port;
    const url = `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host}:${port}/`;
    log('');
    phase('worker started');
    log('WFM service ready.');
    log(`  URL:      ${url}  (the web application; demo logins below)`);
    log(`  API docs: ${url}api/docs/`);
    log(`  Back-office: ${url}backoffice/ (admin, rh1, rh2, superadmin; second factor enrolled at the first login)`);
    log(`  Database: ${databaseLabel}`);
    if (processes > 1) log(`  Server processes: ${processes} (WEB_CONCURRENCY), one worker.`);
    if (demoPassword) printLogins(logins, demoPassword);
    if (embeddedMode) log('  E-mails are printed here as they are queued (no SMTP in embedded mode).');
    log('Press Ctrl+C to stop.');
    if (flag(env.START_PHASES)) {
      log(`Start-up phases (ms since the process started): ${phases.map(([name, at]) => `${name} ${Math.round(at)}`).join(', ')}`);
    }
    // Runs until a signal arrives (onSignal exits).
    return await new Promise<number>(() => {});
  } catch (error) {
    await shutdown.run();
    throw error;
  }
});
