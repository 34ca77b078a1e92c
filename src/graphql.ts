import type { Express, NextFunction, Request, Response } from 'express';
import type { Server } from 'node:http';
import type pg from 'pg';
import { postgraphile } from 'postgraphile';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/express/v4';
import { defaultMaskError } from 'postgraphile/grafserv';
import { PgAggregatesPreset } from '@graphile/pg-aggregates';
import { GraphQLError } from 'postgraphile/graphql';
import { withRequestTransaction, InactiveAccountError, type ActingAccount } from './db/transaction.js';
import { ROLES } from './db/roles.js';
import { ApiError } from './http/errors.js';
import { getRequestAuth } from './http/request-context.js';

const ACCOUNT = Symbol('graphqlAccount');

/** Our SQLSTATE classes (docs/error-codes.md) reach GraphQL clients; anything else is masked. */
function maskError(error: GraphQLError): GraphQLError {
  const original = error.originalError as { code?: string; detail?: string } | undefined;
  if (original?.code && /^W[VAFNMC]/.test(original.code)) {
    return new GraphQLError(error.message, {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      path: error.path,
      extensions: { code: original.code, ...(original.detail ? { field: original.detail } : {}) },
    });
  }
  return defaultMaskError(error);
}

/**
 * PostGraphile v5 over app_public, for staff accounts, under the same RLS as the REST API:
 * each operation runs as wfm_visitor with the acting account in app.account_id.
 */
export async function mountGraphql(app: Express, server: Server | null, pool: pg.Pool, frozenNow?: () => string | null): Promise<() => Promise<void>> {
  const preset: GraphileConfig.Preset = {
    extends: [PostGraphileAmberPreset, PgAggregatesPreset],
    pgServices: [makePgService({ pool, schemas: ['app_public'] })],
    grafast: {
      context(requestContext) {
        const req = requestContext.expressv4?.req as unknown as Record<symbol, ActingAccount> | undefined;
        const account = req?.[ACCOUNT];
        if (!account) throw new Error('unauthenticated GraphQL request');
        // Tests only: the same frozen business clock as the REST transactions.
        const now = frozenNow?.();
        return {
          pgSettings: {
            role: ROLES.visitor,
            'app.account_id': String(account.id),
            'app.employee_id': account.employee_id === null ? '' : String(account.employee_id),
            ...(now ? { 'app.frozen_now': now } : {}),
          },
        };
      },
    },
    grafserv: { graphqlPath: '/graphql', graphiql: false, websockets: false, maskError },
    // Aggregates are opted in per table (smart comment `@behavior +aggregates` in
    // sql/graphql.sql), for reporting; everywhere else they would only bloat the schema.
    schema: { defaultBehavior: '-aggregates' },
  };

  // Only active staff accounts reach the GraphQL endpoint.
  app.use('/graphql', async (req: Request, _res: Response, next: NextFunction) => {
    try {
      const { identity, tokenError } = getRequestAuth(req);
      if (tokenError) throw ApiError.unauthorized(tokenError);
      if (!identity) throw ApiError.unauthorized();
      const account = await withRequestTransaction(pool, identity, async (_client, acting) => acting, { frozenNow: frozenNow?.() });
      if (!account || (!account.is_staff && !account.is_superuser)) {
        throw ApiError.forbidden('GraphQL est réservé aux comptes du personnel d’administration.');
      }
      (req as unknown as Record<symbol, ActingAccount>)[ACCOUNT] = account;
      next();
    } catch (error) {
      next(error instanceof InactiveAccountError ? ApiError.unauthorized('Compte inactif ou inconnu.') : error);
    }
  });

  const pgl = postgraphile(preset);
  const serv = pgl.createServ(grafserv);
  await serv.addTo(app, server);
  return async () => {
    await pgl.release();
  };
}
