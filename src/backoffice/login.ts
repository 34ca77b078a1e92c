/**
 * Back-office login (SPEC, Authentication rule 3): password, then the second factor.
 * The password step opens only a pre-authentication (account and method, 10 minutes); the
 * authenticated session is opened under a new token after the TOTP or backup code, or at
 * the end of the first enrolment. BACKOFFICE_PASSWORD_ONLY (DEBUG only) skips the second factor.
 */
import express, { type Request, type Response } from 'express';
import { generateSecret, verify } from 'otplib';
import { LoginThrottle, loginPolicy, type AuthenticatorCall, type LoginScope } from '../auth/login-throttle.js';
import { verifyPassword } from '../auth/passwords.js';
import { BackofficeSecrets, findHash } from './secrets.js';
import { html, message, trusted, type Html } from './html.js';
import { asyncRoute, type BackofficeDeps, currentSession, render, sessionCookie } from './common.js';

const ISSUER = 'Gestion des temps';
/** One step of tolerance either side of the current 30-second step. */
const TOTP_TOLERANCE_SECONDS = 30;

/** The TOTP time step a valid code belongs to (otplib's result type also covers HOTP). */
function timeStepOf(result: object): number {
  const step = (result as { timeStep?: unknown }).timeStep;
  if (typeof step !== 'number') throw new Error('TOTP verification gave no time step');
  return step;
}

function codeForm(csrf: string, action: string, label: string, hint: string, error?: string): Html {
  return html`<form method="post" action="${action}" class="card narrow" novalidate>
  <input type="hidden" name="csrf_token" value="${csrf}">
  ${error ? message('error', error) : ''}
  <label for="code">${label}</label>
  <p class="hint" id="code-aide">${hint}</p>
  <input id="code" name="code" type="text" inputmode="text" autocomplete="one-time-code" required maxlength="20"
         aria-describedby="code-aide"${error ? trusted(' aria-invalid="true"') : ''} autofocus>
  <button type="submit">Valider</button>
</form>`;
}

function loginForm(csrf: string, username: string, notice?: Html): Html {
  return html`${notice ?? ''}<form method="post" action="/backoffice/login/" class="card narrow">
  <input type="hidden" name="csrf_token" value="${csrf}">
  <label for="username">Identifiant</label>
  <input id="username" name="username" type="text" autocomplete="username" required maxlength="150" value="${username}" autofocus>
  <label for="password">Mot de passe</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024">
  <button type="submit">Continuer</button>
  <p class="hint">Accès réservé aux comptes d’administration et aux ressources humaines (RH n1, RH n2).
  Un second facteur (application d’authentification) est demandé après le mot de passe.</p>
</form>`;
}

export function loginRoutes(deps: BackofficeDeps): express.Router {
  const { sessions, config } = deps;
  const router = express.Router();

  /** `select * from fn(args)` as the authenticator (the functions of login throttling). */
  const call: AuthenticatorCall = (fn, args) => sessions.authenticator(async (client) =>
    (await client.query(`select * from ${fn}(${args.map((_, i) => `$${i + 1}`).join(', ')})`, args)).rows);

  /**
   * Login throttling (src/auth/login-throttle.ts, the rule in SQL): only failures count, per
   * (username, address) strictly and per username with a slowing ceiling; a success counts nothing.
   */
  const throttle = (req: Request, scope: LoginScope, username: string) =>
    new LoginThrottle(call, scope, loginPolicy(config, scope), username, req.ip ?? '');

  function refuseTooMany(req: Request, res: Response, wait: number): void {
    res.setHeader('Retry-After', String(wait));
    render(req, res, 429, 'Trop de tentatives', null,
      message('error', `Trop de tentatives de connexion. Réessayez dans ${Math.ceil(wait / 60)} minute(s).`));
  }

  /** The pre-authentication of the request with the expected method, else a redirect to the password step. */
  function preSession(req: Request, res: Response, method: 'totp' | 'enrol') {
    const session = currentSession(req);
    if (session?.stage === 'pre' && session.method === method) return session;
    if (session?.stage === 'full') res.redirect(303, '/backoffice/');
    else res.redirect(303, `/backoffice/login/${sessionCookie(req) ? '?expire=1' : ''}`);
    return null;
  }

  /**
   * A posted code of the pre-authentication `method` (spaces removed), and its throttled attempt
   * (its outcome is counted by the caller); null when the answer is already sent (redirect or 429).
   */
  async function codeStep(req: Request, res: Response, method: 'totp' | 'enrol') {
    const session = preSession(req, res, method);
    if (!session) return null;
    const attempt = throttle(req, 'bo-2fa', String(session.accountId));
    const wait = await attempt.before();
    if (wait > 0) {
      refuseTooMany(req, res, wait);
      return null;
    }
    return { session, attempt, code: String(req.body?.code ?? '').replace(/\s/g, '').slice(0, 20) };
  }

  /** Second factor passed: the authenticated session replaces the pre-authentication. */
  async function openFullSession(req: Request, res: Response, accountId: number, method: 'totp' | 'backup_code' | 'password',
    generation: number) {
    const token = await sessions.open(req, res, accountId, 'full', method, generation);
    await sessions.authenticator((client) => client.query('select app_private.record_login($1)', [accountId]));
    return token;
  }

  router.get('/login/', (req, res) => {
    if (currentSession(req)?.stage === 'full') {
      res.redirect(303, '/backoffice/');
      return;
    }
    const notice = req.query.expire
      ? message('info', 'Votre session a expiré (la vérification du second facteur doit suivre le mot de passe dans les 10 minutes) : reconnectez-vous.')
      : undefined;
    render(req, res, 200, 'Connexion', null, (csrf) => loginForm(csrf, '', notice));
  });

  router.post('/login/', asyncRoute(async (req, res) => {
    const username = String(req.body?.username ?? '').trim().slice(0, 150);
    const password = String(req.body?.password ?? '').slice(0, 1024);
    const attempt = throttle(req, 'bo', username);
    const wait = await attempt.before();
    if (wait > 0) {
      refuseTooMany(req, res, wait);
      return;
    }
    const row = username
      ? await sessions.authenticator(async (client) =>
          (await client.query<{ account_id: number; password_hash: string | null; is_active: boolean; token_generation: number }>(
            'select * from app_private.login_lookup($1)', [username])).rows[0] ?? null)
      : null;
    const valid = await verifyPassword(row?.password_hash, password);
    // The right password of a closed account: the same answer as a wrong one, and an audit line.
    if (row && valid && !row.is_active) {
      await sessions.authenticatorFor(req)((client) => client.query("select app_private.login_refused($1, 'backoffice')", [row.account_id]));
    }
    if (!row || !valid || !row.is_active) {
      await attempt.failed();
      render(req, res, 401, 'Connexion', null,
        (csrf) => loginForm(csrf, username, message('error', 'Identifiant ou mot de passe incorrect, ou compte inactif.')));
      return;
    }
    await attempt.succeeded();
    const state = await sessions.authenticator(async (client) =>
      (await client.query<{ state: { may_enter: boolean; enrolled: boolean } }>(
        'select app_private.backoffice_login_state($1) as state', [row.account_id])).rows[0]!.state);
    if (!state.may_enter) {
      render(req, res, 403, 'Accès refusé', null, html`${message('error',
        'Votre compte n’a pas accès au back-office : il est réservé aux comptes d’administration (statut équipe) ' +
        'et aux comptes ayant un rôle RH n1 ou RH n2 en cours.')}
<p>Pour vos demandes d’absence, de modification de journée et votre planning, utilisez l’application habituelle.
Si vous pensez devoir accéder au back-office, adressez-vous au service des ressources humaines.</p>`);
      return;
    }
    if (config.backofficePasswordOnly) {
      // Local-only bypass (DEBUG): password alone (src/config.ts refuses it without DEBUG).
      await openFullSession(req, res, row.account_id, 'password', row.token_generation);
      res.redirect(303, '/backoffice/');
      return;
    }
    await sessions.open(req, res, row.account_id, 'pre', state.enrolled ? 'totp' : 'enrol', row.token_generation);
    res.redirect(303, state.enrolled ? '/backoffice/login/verify/' : '/backoffice/login/enrol/');
  }));

  // First login: a new secret on each display (shown once), its QR code drawn here.
  router.get('/login/enrol/', asyncRoute(async (req, res) => {
    const session = preSession(req, res, 'enrol');
    if (!session) return;
    const secret = await generateSecret();
    await sessions.authenticator((client) =>
      client.query('select app_private.backoffice_enrol_start($1, $2)', [session.accountId, sessions.secrets.encryptTotpSecret(secret)]));
    const uri = `otpauth://totp/${encodeURIComponent(`${ISSUER}:${session.username}`)}?secret=${secret}` +
      `&issuer=${encodeURIComponent(ISSUER)}&algorithm=SHA1&digits=6&period=30`;
    // Loaded at the first enrolment, not at start-up.
    const { default: QRCode } = await import('qrcode');
    const svg = await QRCode.toString(uri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
    const grouped = secret.match(/.{1,4}/g)!.join(' ');
    render(req, res, 200, 'Enregistrer un authentificateur', null, (csrf) => html`
<p>Première connexion au back-office : associez une application d’authentification (par exemple FreeOTP, Aegis,
Google Authenticator ou Microsoft Authenticator) à votre compte <strong>${session.username}</strong>.</p>
<ol class="steps">
  <li>Dans l’application, ajoutez un compte en scannant ce QR code.
    <figure class="qr">${trusted(svg.replace('<svg ', '<svg role="img" aria-label="QR code de la clé secrète" '))}</figure></li>
  <li>Ou saisissez la clé secrète à la main (elle n’est affichée qu’une fois) :
    <p class="secret"><code id="cle">${grouped}</code></p></li>
  <li>Saisissez le code à 6 chiffres affiché par l’application pour confirmer.</li>
</ol>
${codeForm(csrf, '/backoffice/login/enrol/', 'Code à 6 chiffres', 'Le code change toutes les 30 secondes.')}`);
  }));

  router.post('/login/enrol/', asyncRoute(async (req, res) => {
    const step = await codeStep(req, res, 'enrol');
    if (!step) return;
    const { session, attempt, code } = step;
    const factor = await sessions.authenticator(async (client) =>
      (await client.query<{ secret_encrypted: string; confirmed: boolean }>(
        'select * from app_private.backoffice_factor($1)', [session.accountId])).rows[0] ?? null);
    const result = factor && !factor.confirmed && /^\d{6}$/.test(code)
      ? await verify({ secret: sessions.secrets.decryptTotpSecret(factor.secret_encrypted), token: code,
          epoch: sessions.epochSeconds(), epochTolerance: TOTP_TOLERANCE_SECONDS })
      : { valid: false as const };
    if (!result.valid) {
      await attempt.failed();
      render(req, res, 400, 'Enregistrer un authentificateur', null, (csrf) => html`
${codeForm(csrf, '/backoffice/login/enrol/', 'Code à 6 chiffres', 'Le code de l’application que vous venez de configurer.',
  'Code incorrect : vérifiez l’heure de votre téléphone et saisissez le code affiché maintenant.')}
<p><a href="/backoffice/login/enrol/">Afficher un nouveau QR code</a> (la clé précédente ne sera plus valable).</p>`);
      return;
    }
    const codes = BackofficeSecrets.newBackupCodes();
    const confirmed = await sessions.authenticatorFor(req)(async (client) =>
      (await client.query<{ ok: boolean }>('select app_private.backoffice_enrol_confirm($1, $2, $3) as ok',
        [session.accountId, timeStepOf(result), codes.map((c) => sessions.secrets.backupCodeHash(c))])).rows[0]!.ok);
    if (!confirmed) {
      res.redirect(303, '/backoffice/login/');
      return;
    }
    await attempt.succeeded();
    await openFullSession(req, res, session.accountId, 'totp', session.generation);
    render(req, res, 200, 'Vos codes de secours', { username: session.username, isSuperuser: session.isSuperuser }, html`
${message('success', 'Votre authentificateur est enregistré.')}
<p>Voici vos <strong>10 codes de secours</strong>. Chacun remplace une fois le code de l’application, si vous n’avez
plus votre téléphone. Notez-les ou imprimez-les maintenant et gardez-les en lieu sûr :
<strong>ils ne seront plus jamais affichés</strong>.</p>
<ul class="codes" aria-label="Codes de secours">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
<p><a class="button" href="/backoffice/">J’ai noté mes codes, accéder au back-office</a></p>`);
  }));

  router.get('/login/verify/', (req, res) => {
    const session = preSession(req, res, 'totp');
    if (!session) return;
    render(req, res, 200, 'Second facteur', null, (csrf) => html`
<p>Compte <strong>${session.username}</strong> : saisissez le code de votre application d’authentification.</p>
${codeForm(csrf, '/backoffice/login/verify/', 'Code à 6 chiffres ou code de secours',
  'Sans votre téléphone, saisissez l’un de vos codes de secours (par exemple abcde-fghjk) ; chacun ne sert qu’une fois.')}`);
  });

  router.post('/login/verify/', asyncRoute(async (req, res) => {
    const step = await codeStep(req, res, 'totp');
    if (!step) return;
    const { session, attempt, code } = step;
    let method: 'totp' | 'backup_code' | null = null;
    if (/^\d{6}$/.test(code)) {
      const factor = await sessions.authenticator(async (client) =>
        (await client.query<{ secret_encrypted: string; confirmed: boolean; last_step: string | null }>(
          'select * from app_private.backoffice_factor($1)', [session.accountId])).rows[0] ?? null);
      if (factor?.confirmed) {
        const result = await verify({
          secret: sessions.secrets.decryptTotpSecret(factor.secret_encrypted), token: code, epoch: sessions.epochSeconds(),
          epochTolerance: TOTP_TOLERANCE_SECONDS,
          ...(factor.last_step === null ? {} : { afterTimeStep: Number(factor.last_step) }),
        });
        // The step is recorded atomically: the same code sent twice at once passes once.
        if (result.valid && await sessions.authenticator(async (client) =>
          (await client.query<{ ok: boolean }>('select app_private.backoffice_totp_accept($1, $2) as ok',
            [session.accountId, timeStepOf(result)])).rows[0]!.ok)) method = 'totp';
      }
    } else if (code.length >= 10) {
      const hash = sessions.secrets.backupCodeHash(code);
      const unused = await sessions.authenticator(async (client) =>
        (await client.query<{ id: string; code_hash: Buffer }>('select * from app_private.backoffice_backup_codes($1)', [session.accountId])).rows);
      const index = findHash(hash, unused.map((row) => row.code_hash));
      if (index >= 0 && await sessions.authenticatorFor(req)(async (client) =>
        (await client.query<{ ok: boolean }>('select app_private.backoffice_backup_code_use($1, $2) as ok',
          [session.accountId, unused[index]!.id])).rows[0]!.ok)) method = 'backup_code';
    }
    if (!method) {
      await attempt.failed();
      render(req, res, 400, 'Second facteur', null, (csrf) =>
        codeForm(csrf, '/backoffice/login/verify/', 'Code à 6 chiffres ou code de secours',
          'Sans votre téléphone, saisissez l’un de vos codes de secours ; chacun ne sert qu’une fois.',
          'Code invalide, expiré ou déjà utilisé.'));
      return;
    }
    await attempt.succeeded();
    await openFullSession(req, res, session.accountId, method, session.generation);
    res.redirect(303, '/backoffice/');
  }));

  router.post('/logout/', asyncRoute(async (req, res) => {
    await sessions.close(req, res);
    res.redirect(303, '/backoffice/login/');
  }));

  return router;
}
