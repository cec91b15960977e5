/** The console's shell: sign-in, navigation and the hash routes of its pages. */
import { api, ApiError, clearToken, hasSession, setSessionCsrf, setToken, token } from './api.js';
import { auditPage } from './audit-page.js';
import { notificationsPage } from './notifications-page.js';
import { field, fill, h, notice } from './dom.js';
import { exportsPage } from './exports-page.js';
import { importPage } from './import-page.js';
import { importsPage } from './imports-page.js';
import { migrationPage } from './migration-page.js';
import { migrationsPage } from './migrations-page.js';
import { newImportPage } from './new-import-page.js';
import { targetsPage } from './targets-page.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
let metaPromise;
let disposeCurrent;

/** What the API accepts (modes, resources, fields), asked once per sign-in. */
function meta() {
  metaPromise ??= api('/v1/meta').catch((error) => {
    metaPromise = undefined;
    throw error;
  });
  return metaPromise;
}

const ROUTES = [
  [
    /^#\/imports\/?(?:\?(.*))?$/,
    'imports',
    (match) => (root, context) => importsPage(root, context, new URLSearchParams(match[1] ?? '')),
  ],
  [/^#\/imports\/new$/, 'new', () => newImportPage],
  [
    /^#\/imports\/([^/]+)$/,
    'imports',
    (match) => (root, context) => importPage(root, context, decodeURIComponent(match[1])),
  ],
  [/^#\/exports$/, 'exports', () => exportsPage],
  [/^#\/migrations\/?$/, 'migrations', () => migrationsPage],
  [
    /^#\/migrations\/([^/]+)$/,
    'migrations',
    (match) => (root, context) => migrationPage(root, context, decodeURIComponent(match[1])),
  ],
  [/^#\/targets\/?$/, 'targets', () => targetsPage],
  [/^#\/audit\/?$/, 'audit', () => auditPage],
  [/^#\/notifications\/?$/, 'notifications', () => notificationsPage],
];

/** Who is signed in, shown in the header. */
function showWho(session) {
  const who = document.getElementById('who');
  who.textContent = session ? `${session.display ?? session.name} (${session.role})` : '';
}

/** A cookie session from the identity provider's sign-in, if this browser has one. */
async function resumeSession() {
  try {
    const session = await api('/v1/session', { signingIn: true });
    if (!session.csrf) return false;
    setSessionCsrf(session.csrf);
    showWho(session);
    return true;
  } catch {
    return false;
  }
}

/** The identity provider's sign-in link, when porter has one configured. */
async function providerLink() {
  try {
    const response = await fetch('/v1/session/providers');
    const providers = await response.json();
    if (!providers.oidc) return undefined;
    return h(
      'p',
      null,
      h(
        'a',
        { class: 'button', href: '/v1/session/oidc', id: 'oidc-sign-in' },
        'Sign in with your organisation',
      ),
    );
  } catch {
    return undefined;
  }
}

function signInPage(message) {
  nav.hidden = true;
  const input = h('input', {
    type: 'password',
    id: 'token',
    name: 'token',
    autocomplete: 'off',
    required: true,
    spellcheck: false,
  });
  const status = h('div', { class: 'form-status' });
  if (message) status.append(notice('error', message));
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (event) => {
        event.preventDefault();
        fill(status);
        setToken(input.value.trim());
        try {
          const answer = await api('/v1/meta', { signingIn: true });
          metaPromise = Promise.resolve(answer);
          api('/v1/session').then(showWho, () => {});
          route();
        } catch (error) {
          clearToken();
          status.append(
            notice(
              'error',
              error instanceof ApiError && error.status === 401
                ? 'That token was refused.'
                : `Could not reach porter: ${error.message}`,
            ),
          );
          input.focus();
          input.select();
        }
      },
    },
    h('h1', null, 'Sign in'),
    h(
      'p',
      null,
      'Enter the API token (PORTER_API_TOKEN). It is kept in this browser tab only and sent with each call.',
    ),
    field('API token', input),
    h('button', { type: 'submit' }, 'Sign in'),
    status,
  );
  fill(main, form);
  input.focus();
  providerLink().then((link) => {
    if (link) form.insertBefore(link, form.children[2]);
  });
}

async function route() {
  disposeCurrent?.();
  disposeCurrent = undefined;
  if (!token() && !hasSession() && !(await resumeSession())) {
    signInPage();
    return;
  }
  if (!location.hash || location.hash === '#' || location.hash === '#/') {
    location.replace('#/imports');
    return;
  }
  nav.hidden = false;
  let matched;
  for (const [pattern, section, make] of ROUTES) {
    const match = pattern.exec(location.hash);
    if (match) {
      matched = { section, page: make(match) };
      break;
    }
  }
  for (const link of nav.querySelectorAll('a')) {
    if (matched && link.dataset.section === matched.section)
      link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const controller = new AbortController();
  disposeCurrent = () => controller.abort();
  fill(main);
  if (!matched) {
    main.append(h('h1', null, 'Not found'), h('p', null, h('a', { href: '#/imports' }, 'Imports')));
    return;
  }
  try {
    await matched.page(main, { signal: controller.signal, meta: await meta() });
  } catch (error) {
    if (controller.signal.aborted) return;
    main.append(notice('error', error.message));
  }
  main.focus({ preventScroll: true });
}

document.getElementById('sign-out').addEventListener('click', async () => {
  if (hasSession()) await api('/v1/session/logout', { method: 'POST' }).catch(() => {});
  setSessionCsrf(undefined);
  showWho(undefined);
  clearToken();
  metaPromise = undefined;
  location.hash = '#/imports';
  route();
});
window.addEventListener('porter:signed-out', () => {
  disposeCurrent?.();
  metaPromise = undefined;
  setSessionCsrf(undefined);
  showWho(undefined);
  signInPage('The token was refused; sign in again.');
});
window.addEventListener('hashchange', route);
route();
