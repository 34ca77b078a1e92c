import { signAccessToken } from '../../auth/jwt.js';
import { ApiError } from '../errors.js';
import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

export const impersonationModule: RouteModule = {
  routes: [
    {
      method: 'post',
      path: '/api/auth/impersonate/',
      operationId: 'auth_impersonate',
      summary: 'Emprunter l’identité d’un compte (superutilisateur, si ALLOW_IMPERSONATION est actif)',
      description:
        'Désactivé par défaut : sans `ALLOW_IMPERSONATION`, la route répond 404 et tout jeton portant la revendication ' +
        '`act` est refusé (401). Activé : un superutilisateur (sinon 403) obtient un jeton de 6 heures dont `sub` est le ' +
        'compte emprunté et `act` le superutilisateur. L’emprunt est journalisé (verbe Impersonation, modèle account) et ' +
        'chaque ligne d’audit écrite avec ce jeton porte l’emprunteur. On n’emprunte ni son propre compte, ni un compte ' +
        'fermé (400 sous account), ni un autre superutilisateur (403), ni depuis un jeton d’emprunt (403). Pour revenir à ' +
        'sa propre identité, le client reprend son jeton d’origine.',
      tags: ['Authentification'],
      auth: 'account',
      permission: 'is_superuser',
      body: s.object({ account: s.id('Compte à emprunter.') }, ['account']),
      status: 200,
      response: s.object(
        {
          access: s.string({ description: 'JWT (sub = compte emprunté, act = superutilisateur).' }),
          account: s.object({ id: s.int(), username: s.string(), employee_id: s.nullable(s.int()) }, ['id', 'username', 'employee_id']),
          impersonator: s.object({ id: s.int(), username: s.string() }, ['id', 'username']),
        },
        ['access', 'account', 'impersonator'],
      ),
      errors: [400, 403, 404],
      handler: async ({ config, identity, inRequestTransaction, body }) => {
        if (!config.allowImpersonation) {
          // Off, the route does not exist; the account is still reloaded first, so that a closed
          // account gets 401 here as everywhere (SPEC Authentication rule 1).
          await inRequestTransaction(async () => undefined);
          throw ApiError.notFound('Adresse inconnue.');
        }
        const result = await inRequestTransaction(async (client) => {
          // The function refuses unless told, in this transaction, that impersonation is on.
          await client.query("select set_config('app.allow_impersonation', 'on', true)");
          const { rows } = await client.query<{ result: { account: { id: number; username: string; employee_id: number | null }; impersonator: { id: number; username: string } } }>(
            'select app_public.impersonation_start(p_account => $1::int) as result',
            [body.account],
          );
          return rows[0]!.result;
        });
        return {
          status: 200,
          body: { access: signAccessToken(config.jwtSecret, result.account.id, identity!.accountId), ...result },
        };
      },
    },
  ],
};
