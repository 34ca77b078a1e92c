import type { Express, NextFunction, Request, Response } from 'express';
import type { Server } from 'node:http';
import type pg from 'pg';
import { postgraphile } from 'postgraphile';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/express/v4';
import { defaultMaskError } from 'postgraphile/grafserv';
import { GraphQLError } from 'postgraphile/graphql';
import { InactiveAccountError, type ActingAccount } from './db/transaction.js';
import { transactionSettingsOf } from './db/pool.js';
import { asUser, secondFactorSetting } from './backoffice/common.js';
import { ROLES } from './db/roles.js';
import { ApiError } from './http/errors.js';
import { getRequestAuth } from './http/request-context.js';
import { csrfRefusal } from './auth/middleware.js';

const CALLER = Symbol('graphqlCaller');

/** Who runs the operations of a request: the session's account and its second factor. */
interface GraphqlCaller {
  account: ActingAccount;
  secondFactor: 'on' | 'off';
}

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
 * The surface offers the API functions of app_public and nothing else: no table, view or
 * composite type becomes a GraphQL type, field or mutation. The functions return what REST
 * returns (they are REST's own SQL calls, with their perimeter and column rules), whereas a
 * table read under RLS alone would show rows and columns (comments, decision reasons,
 * document names) that the functions hide from the same reader (SPEC Permissions rule 8).
 * A table added later stays out the same way.
 */
const FunctionsOnlyPlugin: GraphileConfig.Plugin = {
  name: 'WfmFunctionsOnlyPlugin',
  version: '1.0.0',
  schema: {
    entityBehavior: {
      pgResource: {
        override: {
          provides: ['wfmFunctionsOnly'],
          after: ['override'],
          callback(behavior, resource) {
            return resource.parameters ? behavior : [behavior, '-*'];
          },
        },
      },
      pgCodec: {
        override: {
          provides: ['wfmFunctionsOnly'],
          after: ['override'],
          callback(behavior, codec) {
            // Named composite types (tables, app_public.slot); the anonymous record of a
            // function returning TABLE(...) stays.
            return codec.attributes && !codec.isAnonymous ? [behavior, '-*'] : behavior;
          },
        },
      },
    },
  },
};

/**
 * PostGraphile v5 over the functions of app_public, for staff accounts signed in to the back-office
 * (session cookie past the second factor; POST needs X-CSRFToken, src/auth/middleware.ts), under
 * the same RLS as the REST API: each operation runs as wfm_visitor with the acting account in
 * app.account_id and the session's app.second_factor_verified.
 */
export async function mountGraphql(app: Express, server: Server | null, pool: pg.Pool, frozenNow?: () => string | null): Promise<() => Promise<void>> {
  const preset: GraphileConfig.Preset = {
    extends: [PostGraphileAmberPreset],
    plugins: [FunctionsOnlyPlugin],
    pgServices: [makePgService({ pool, schemas: ['app_public'] })],
    grafast: {
      context(requestContext) {
        const req = requestContext.expressv4?.req as unknown as Record<symbol, GraphqlCaller> | undefined;
        const caller = req?.[CALLER];
        if (!caller) throw new Error('unauthenticated GraphQL request');
        const { account } = caller;
        // Tests only: the same frozen business clock as the REST transactions.
        const now = frozenNow?.();
        return {
          pgSettings: {
            // The session settings of the pool's transactions (src/db/pool.ts), set per transaction.
            ...transactionSettingsOf(pool),
            role: ROLES.visitor,
            'app.account_id': String(account.id),
            'app.employee_id': account.employee_id === null ? '' : String(account.employee_id),
            'app.second_factor_verified': caller.secondFactor,
            ...(now ? { 'app.frozen_now': now } : {}),
          },
        };
      },
    },
    grafserv: { graphqlPath: '/graphql', graphiql: false, websockets: false, maskError },
  };

  // Only a back-office session past its second factor, of an active staff or superuser account,
  // reaches the GraphQL endpoint; a bearer token never does (the surface is the back-office's).
  app.use('/graphql', async (req: Request, _res: Response, next: NextFunction) => {
    try {
      const { identity, tokenError, session, csrf } = getRequestAuth(req);
      // Refused by the authentication middleware already; refused here again, whatever path it matched.
      if (csrf === 'missing') throw csrfRefusal();
      if (tokenError) throw ApiError.unauthorized(tokenError);
      if (identity && !session) {
        throw ApiError.forbidden(
          'GraphQL passe par la session du back-office avec son second facteur : connectez-vous sur /backoffice/login/ ; ' +
            'les jetons d’accès (Authorization: Bearer) n’y sont pas acceptés.',
        );
      }
      if (session?.stage !== 'full') throw ApiError.unauthorized();
      // The account and app.second_factor_verified exactly as the back-office's own calls, and
      // the staff refusal of the request prelude (app_private.begin_request_or_fail, WF002 → 403),
      // as for the REST routes reserved to staff: whether an account is staff is SQL's answer.
      const account = await asUser(req, session, async (_client, acting) => acting, { staffOnly: true });
      (req as unknown as Record<symbol, GraphqlCaller>)[CALLER] = { account, secondFactor: secondFactorSetting(session) };
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
