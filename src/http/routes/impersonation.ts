import { signAccessToken } from '../../auth/jwt.js';
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
      // Off, the route does not exist (404 once the account is reloaded: a closed account gets 401
      // here as everywhere, SPEC Authentication rule 1).
      enabled: (config) => config.allowImpersonation,
      sql: { fn: 'app_public.impersonation_start', args: [{ name: 'p_account', from: 'body-field', key: 'account', cast: 'int' }] },
      // The function refuses unless told, in its transaction, that impersonation is on.
      settings: (): Record<string, string> => ({ 'app.allow_impersonation': 'on' }),
      render: ({ config, identity }, result) => {
        const started = result as { account: { id: number } };
        return {
          status: 200,
          body: { access: signAccessToken(config.jwtSecret, started.account.id, identity!.accountId, identity!.generation), ...started },
        };
      },
    },
    {
      method: 'post',
      path: '/api/auth/impersonate/end/',
      operationId: 'auth_impersonate_end',
      summary: 'Terminer un emprunt d’identité (avec le jeton d’emprunt)',
      description:
        'Avec le jeton d’emprunt : journalise la fin de l’emprunt (modèle account_security, événement impersonation_ended, ' +
        'par le superutilisateur), puis le client reprend son jeton d’origine. Sans jeton d’emprunt : 400 sous ' +
        'non_field_errors. Comme le début, la route n’existe pas (404) sans `ALLOW_IMPERSONATION`. Le jeton d’emprunt ' +
        'n’est pas révoqué individuellement : il expire à son heure, ou avec les sessions de son superutilisateur.',
      tags: ['Authentification'],
      auth: 'account',
      status: 200,
      response: s.object(
        { account: s.int({ description: 'Compte dont l’identité était empruntée.' }), impersonator: s.int(), ended: s.bool() },
        ['account', 'impersonator', 'ended'],
      ),
      errors: [400, 404],
      enabled: (config) => config.allowImpersonation,
      sql: { fn: 'app_public.impersonation_end', args: [] },
      settings: (): Record<string, string> => ({ 'app.allow_impersonation': 'on' }),
    },
  ],
};
