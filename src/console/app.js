/** The console's shell: sign-in, navigation and the hash routes of its pages. */
import { api, ApiError, clearToken, setToken, token } from './api.js';
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
  [/^#\/imports\/?$/, 'imports', () => importsPage],
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
];

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
}

async function route() {
  disposeCurrent?.();
  disposeCurrent = undefined;
  if (!token()) {
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

document.getElementById('sign-out').addEventListener('click', () => {
  clearToken();
  metaPromise = undefined;
  location.hash = '#/imports';
  route();
});
window.addEventListener('porter:signed-out', () => {
  disposeCurrent?.();
  metaPromise = undefined;
  signInPage('The token was refused; sign in again.');
});
window.addEventListener('hashchange', route);
route();
