import { once } from 'node:events';
import type { Response } from 'express';
import type pg from 'pg';
import type { HandlerContext, HandlerResult, RouteSpec } from '../route.js';
import { contentDisposition } from '../downloads.js';
import { sqlValues } from '../sql-call.js';
import type { ExportColumn, RawValue } from './columns.js';
import type { ExportDefinition } from './definition.js';
import { CSV_CONTENT_TYPE, csvHeader, csvRow } from './csv.js';
import { loadXlsx, XLSX_CONTENT_TYPE, XlsxExport } from './xlsx.js';

/** Rows per FETCH: a bounded batch in memory, whatever the export's size. */
export const FETCH_ROWS = 1000;

export type ExportFormat = 'csv' | 'xlsx';

/** Every value as PostgreSQL's text: no Date or number parsing between the database and the file. */
const AS_TEXT: pg.CustomTypesConfig = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig;

/**
 * `declare ... cursor for select * from <fn>(<named args>)`: the manifest's function and
 * argument names (checked against pg_proc at start-up), values as parameters.
 */
function declareText(route: RouteSpec): string {
  const call = route.sql!;
  if (!/^app_public\.[a-z_][a-z0-9_]*$/.test(call.fn)) throw new Error(`${route.operationId}: bad function name`);
  const args = call.args.map((arg, i) => {
    if (!/^p_[a-z0-9_]+$/.test(arg.name)) throw new Error(`${route.operationId}: bad argument name ${arg.name}`);
    return `${arg.name} => $${i + 1}::${arg.cast}`;
  });
  return `declare wfm_export no scroll cursor for select * from ${call.fn}(${args.join(', ')})`;
}

/**
 * Resolves when `res` can take more, false when the client went away. Plain listeners, both
 * removed once one fires: a download waits here once per batch (hundreds of times).
 */
function drained(res: Response): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  if (!res.writableNeedDrain) return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (value: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(value);
    };
    const onDrain = () => settle(!res.destroyed);
    const onClose = () => settle(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

class ClientGone extends Error {}

/**
 * Resolves with `work` (the end of the file written), or fails when the client goes first: a
 * response closed before it finished never emits 'finish', and the transaction must not wait.
 */
async function unlessClientGone(res: Response, work: Promise<unknown>): Promise<void> {
  if (res.destroyed && !res.writableFinished) throw new ClientGone();
  // Neither promise may reject unobserved once the other has won the race.
  const done = work.then(() => ({ gone: false, error: null as unknown }), (error: unknown) => ({ gone: false, error }));
  const gone = once(res, 'close').then(() => ({ gone: !res.writableFinished, error: null as unknown }), () => ({ gone: true, error: null as unknown }));
  const outcome = await Promise.race([done, gone]);
  if (outcome.error) throw outcome.error;
  if (outcome.gone) throw new ClientGone();
}

/** Writes the rows of the batches as CSV or XLSX; the headers go out with the first batch. */
interface Sink {
  start(): void;
  rows(rows: Array<Record<string, RawValue>>): boolean;
  finish(): Promise<void>;
}

function csvSink(res: Response, columns: readonly ExportColumn[]): Sink {
  return {
    start: () => void res.write(csvHeader(columns)),
    rows: (rows) => res.write(rows.map((row) => csvRow(columns, row)).join('')),
    // 'finish' rather than end()'s callback: the compression middleware's end() takes no callback.
    finish: () => unlessClientGone(res, new Promise<void>((resolve) => {
      res.once('finish', () => resolve());
      res.end();
    })),
  };
}

function xlsxSink(res: Response, definition: ExportDefinition): Sink {
  let workbook: XlsxExport;
  return {
    start: () => {
      workbook = new XlsxExport(res, definition.columns, definition.sheet);
    },
    rows: (rows) => {
      for (const row of rows) workbook.addRow(row);
      return !res.writableNeedDrain;
    },
    finish: () => unlessClientGone(res, workbook.finish()),
  };
}

/**
 * Streams an export route (a route's `export`, run by the router): in the request transaction (account reloaded, visitor role), a
 * server-side cursor over the route's SQL function, read FETCH_ROWS at a time; each batch is
 * written before the next is fetched, waiting for the client when the response is full
 * (backpressure). Errors of the first batch (filters, perimeter) answer as JSON errors, before
 * any byte; an error later destroys the response, so that a cut file never looks complete.
 */
export async function streamExport(
  ctx: HandlerContext,
  route: RouteSpec,
  definition: ExportDefinition,
  inRequestTransaction: (work: (client: pg.PoolClient) => Promise<void>) => Promise<void>,
): Promise<HandlerResult> {
  const { res } = ctx;
  const format = ctx.query.format as ExportFormat;
  const values = sqlValues(route, {
    params: ctx.params, query: ctx.query, body: ctx.body, page: 1, pageSize: 1, config: ctx.config,
  });
  let started = false;
  if (format === 'xlsx') await loadXlsx();
  try {
    await inRequestTransaction(async (client) => {
      await client.query({ text: declareText(route), values });
      const fetch = { text: `fetch ${FETCH_ROWS} from wfm_export`, types: AS_TEXT };
      let batch = (await client.query<Record<string, RawValue>>(fetch)).rows;
      const sink = format === 'xlsx' ? xlsxSink(res, definition) : csvSink(res, definition.columns);
      res.status(200);
      res.setHeader('Content-Type', format === 'xlsx' ? XLSX_CONTENT_TYPE : CSV_CONTENT_TYPE);
      res.setHeader('Content-Disposition', contentDisposition(`${definition.filename(ctx.query)}.${format}`));
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      started = true;
      sink.start();
      while (batch.length > 0) {
        sink.rows(batch);
        if (batch.length < FETCH_ROWS) break;
        if (!(await drained(res))) throw new ClientGone();
        batch = (await client.query<Record<string, RawValue>>(fetch)).rows;
      }
      await client.query('close wfm_export');
      await sink.finish();
    });
  } catch (error) {
    if (!started) throw error;
    if (!(error instanceof ClientGone)) ctx.req.log?.error({ err: error }, 'export interrupted');
    res.destroy();
  }
  return { handled: true };
}
