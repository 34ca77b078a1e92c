import { signAccessToken } from '../../auth/jwt.js';
import { hashPassword, passwordProblems, verifyPassword } from '../../auth/passwords.js';
import { LoginThrottle, loginPolicy } from '../../auth/login-throttle.js';
import { ApiError } from '../errors.js';
import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';
import { INPUT_CONTRACT } from '../input-contract.js';

const INVALID_CREDENTIALS = 'Aucun compte actif n’a été trouvé avec les identifiants fournis.';
const RESET_ANSWER = 'Si un compte actif correspond, un e-mail contenant un lien de réinitialisation a été envoyé.';

export const authRoutes: RouteModule = {
  schemas: {
    Me: s.object(
      {
        id: s.int(),
        username: s.string(),
        employee_id: s.nullable(s.int()),
        display_name: s.string({ description: 'La personne : le nom du salarié du compte, sinon l’identifiant.' }),
        roles: s.array(s.enum(['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2', 'Salarié', 'Intérimaire', 'Service Paie']), {
          description: 'Tous les rôles détenus ce jour, par ordre de préséance d’affichage (vide sans rôle).',
        }),
        role: s.enum(['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2', 'Salarié', 'Intérimaire', 'Service Paie'], {
          description: 'Rôle affiché, choisi par ordre de préséance parmi les rôles détenus ; absent sans rôle.',
        }),
        can_view_absence_queue: s.bool(),
        can_decide_absences: s.bool(),
        can_decide_shift_changes: s.bool(),
        can_view_payroll: s.bool(),
        can_delegate_absences: s.bool({ description: 'Décide lui-même des absences : peut déléguer ces décisions (une délégation reçue ne se délègue pas).' }),
        can_delegate_shift_changes: s.bool({ description: 'Décide lui-même des modifications de journée : peut déléguer ces décisions.' }),
        can_impersonate: s.bool({
          description: 'Le bouton « Emprunter une identité » : vrai seulement si le serveur l’autorise (ALLOW_IMPERSONATION), ' +
            'pour un superutilisateur qui n’emprunte pas déjà une identité.',
        }),
      },
      ['id', 'username', 'employee_id', 'display_name', 'roles', 'can_view_absence_queue', 'can_decide_absences', 'can_decide_shift_changes', 'can_view_payroll',
        'can_delegate_absences', 'can_delegate_shift_changes', 'can_impersonate'],
    ),
  },
  routes: [
    {
      method: 'post',
      path: '/api/auth/token/',
      operationId: 'auth_token',
      summary: 'Connexion : obtenir un jeton d’accès (6 heures, sans jeton de rafraîchissement)',
      description:
        'Limites : 60 requêtes par minute et par adresse, comme toute route publique, même avec un jeton. ' +
        'Seuls les échecs comptent (identifiant inconnu, mot de passe faux, compte inactif) : après 10 échecs en ' +
        '15 minutes pour un identifiant depuis une adresse, cette adresse reçoit 429 (Retry-After) pour cet ' +
        'identifiant jusqu’à la fin de la fenêtre ; au-delà de 20 échecs en une heure pour un identifiant, toutes ' +
        'adresses confondues, chaque tentative attend (1 s, puis 2, 4, 8, au plus 10 s) sans jamais être refusée, ' +
        'et une adresse qui a échoué n’a plus droit qu’à 3 échecs dans sa fenêtre. ' +
        'Une connexion réussie ne compte pas.',
      tags: ['Authentification'],
      auth: 'public',
      body: s.object({ username: s.string({ minLength: 1, maxLength: INPUT_CONTRACT.usernameMaxLength }), password: s.string({ minLength: 1, maxLength: 1024 }) }, ['username', 'password']),
      status: 200,
      response: s.object({ access: s.string({ description: 'JWT à présenter dans Authorization: Bearer <jeton>.' }) }, ['access']),
      errors: [400, 401],
      handler: async ({ callAsAuthenticator, config, body, req }) => {
        const username = String(body.username);
        const password = String(body.password);
        // Login throttling (src/auth/login-throttle.ts): before the password is checked, counted after.
        const throttle = new LoginThrottle(callAsAuthenticator, 'api', loginPolicy(config, 'api'), username, req.ip ?? '');
        const wait = await throttle.before();
        if (wait > 0) throw ApiError.tooManyRequests(wait);
        const [row] = await callAsAuthenticator<{ account_id: number; password_hash: string | null; is_active: boolean; token_generation: number }>(
          'app_private.login_lookup', [username]);
        // The hash is checked outside any transaction: argon2 takes tens of milliseconds of CPU,
        // during which no pooled connection waits.
        const valid = await verifyPassword(row?.password_hash, password);
        // The right password of a closed account: the same answer as a wrong one, and an audit line.
        if (row && valid && !row.is_active) await callAsAuthenticator('app_private.login_refused', [row.account_id, 'api']);
        if (!row || !valid || !row.is_active) {
          await throttle.failed();
          throw new ApiError(401, { detail: INVALID_CREDENTIALS });
        }
        await throttle.succeeded();
        await callAsAuthenticator('app_private.record_login', [row.account_id]);
        // The generation read with the hash: a reset between the two ends this token at its first request.
        return { status: 200, body: { access: signAccessToken(config.jwtSecret, row.account_id, null, row.token_generation) } };
      },
    },
    {
      method: 'get',
      path: '/api/auth/me/',
      operationId: 'auth_me',
      summary: 'Le compte connecté, son rôle affiché et ses indicateurs d’interface',
      tags: ['Authentification'],
      auth: 'account',
      sql: { fn: 'app_public.me', args: [] },
      // can_impersonate reads whether the server allows impersonation, as impersonation_start does.
      settings: (config): Record<string, string> => (config.allowImpersonation ? { 'app.allow_impersonation': 'on' } : {}),
      status: 200,
      response: s.ref('Me'),
      errors: [],
    },
    {
      method: 'post',
      path: '/api/auth/password/reset/',
      operationId: 'auth_password_reset',
      summary: 'Demander un lien de réinitialisation du mot de passe',
      description:
        'La réponse est la même que le compte existe ou non. Le lien, valable une heure et à usage unique, ' +
        'est envoyé à l’adresse e-mail professionnelle. Limité à 5 demandes par heure.',
      tags: ['Authentification'],
      auth: 'public',
      rateLimit: 'password_reset',
      body: s.object(
        {
          login: s.string({
            minLength: 1,
            maxLength: Math.max(INPUT_CONTRACT.usernameMaxLength, INPUT_CONTRACT.emailMaxLength),
            description: 'Identifiant ou adresse e-mail professionnelle.',
          }),
        },
        ['login'],
      ),
      status: 200,
      response: s.ref('Detail'),
      errors: [400],
      handler: async ({ callAsAuthenticator, body }) => {
        await callAsAuthenticator('app_private.password_reset_request', [String(body.login)]);
        return { status: 200, body: { detail: RESET_ANSWER } };
      },
    },
    {
      method: 'post',
      path: '/api/auth/password/reset/confirm/',
      operationId: 'auth_password_reset_confirm',
      summary: 'Définir un nouveau mot de passe avec le jeton reçu (réinitialisation ou invitation)',
      tags: ['Authentification'],
      auth: 'public',
      body: s.object(
        { token: s.string({ minLength: 1, maxLength: 200 }), new_password: s.string({ minLength: 1, maxLength: 1024 }) },
        ['token', 'new_password'],
      ),
      status: 200,
      response: s.ref('Detail'),
      errors: [400],
      handler: async ({ callAsAuthenticator, body }) => {
        const token = String(body.token);
        const password = String(body.new_password);
        // The token is checked first (its account's name enters the password rules); the
        // confirmation checks it again as it consumes it.
        const [checked] = await callAsAuthenticator<{ result: string }>('app_private.password_token_check', [token]);
        const problems = passwordProblems(password, checked!.result);
        if (problems.length) throw ApiError.badRequest({ new_password: problems });
        await callAsAuthenticator('app_private.password_reset_confirm', [token, await hashPassword(password)]);
        return { status: 200, body: { detail: 'Votre mot de passe a été enregistré. Vous pouvez vous connecter.' } };
      },
    },
  ],
};
