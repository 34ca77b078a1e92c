import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

export const systemRoutes: RouteModule = {
  routes: [
    {
      method: 'get',
      path: '/api/health/',
      operationId: 'health',
      summary: 'Sonde de disponibilité (vérifie la base de données)',
      tags: ['Système'],
      auth: 'public',
      status: 200,
      response: s.object({ status: s.enum(['ok']), database: s.enum(['ok']) }, ['status', 'database']),
      errors: [503],
      errorBodies: {
        503: s.object(
          { detail: s.string(), status: s.enum(['error']), database: s.enum(['unavailable']) },
          ['detail', 'status', 'database'],
        ),
      },
      handler: async ({ databaseAnswers }) => {
        if (await databaseAnswers()) return { status: 200, body: { status: 'ok', database: 'ok' } };
        return {
          status: 503,
          body: { detail: 'La base de données est injoignable.', status: 'error', database: 'unavailable' },
          headers: { 'Retry-After': '5' },
        };
      },
    },
  ],
};
