/**
 * Server-rendered HTML of the back-office: an escaping template tag and the page layout
 * (French, one stylesheet, no script: the Content-Security-Policy of /backoffice/ refuses any).
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML already escaped (or built by `html`). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(value: Part): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Template tag: every interpolated value is escaped unless it is Html. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Markup built elsewhere and known to be safe (the locally rendered QR code SVG). */
export function trusted(markup: string): Html {
  return new Html(markup);
}

export interface NavLink {
  href: string;
  label: string;
  summary: string;
}

export interface NavUser {
  username: string;
  isSuperuser: boolean;
  /** The registry's pages this account may open (common.ts navUser). */
  links?: NavLink[];
}

export interface PageOptions {
  title: string;
  /** The signed-in user: the header then shows the navigation and the logout button. */
  user?: NavUser | null;
  csrf: string;
  /** Current path, to mark the active navigation link. */
  path?: string;
  body: Html;
}

/** The navigation: only pages that exist, and only those this user may open. */
function navigation(user: NavUser, path: string | undefined): Html {
  const links: Array<[string, string]> = [['/backoffice/', 'Accueil'], ...(user.links ?? []).map((l): [string, string] => [l.href, l.label])];
  return html`<nav aria-label="Navigation principale"><ul>${links.map(([href, label]) =>
    html`<li><a href="${href}"${href === path ? trusted(' aria-current="page"') : ''}>${label}</a></li>`)}</ul></nav>`;
}

export function page(options: PageOptions): string {
  const { title, user, csrf, body, path } = options;
  return `<!doctype html>\n${html`<html lang="fr">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Back-office</title>
<link rel="stylesheet" href="/backoffice/static/backoffice.css">
</head>
<body>
<a class="skip" href="#contenu">Aller au contenu</a>
<header class="top">
  <p class="brand">Gestion des temps · <strong>Back-office</strong></p>
  ${user ? html`${navigation(user, path)}
  <form method="post" action="/backoffice/logout/" class="logout">
    <input type="hidden" name="csrf_token" value="${csrf}">
    <span class="who">${user.username}</span>
    <button type="submit" class="secondary">Se déconnecter</button>
  </form>` : ''}
</header>
<main id="contenu" tabindex="-1">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`.text}\n`;
}

/** A message block; role=alert for errors so that screen readers announce them. */
export function message(kind: 'error' | 'info' | 'success', text: string): Html {
  return kind === 'error'
    ? html`<p class="message error" role="alert">${text}</p>`
    : html`<p class="message ${kind}" role="status">${text}</p>`;
}
