/**
 * Targets: the named admin servers this porter knows (GET /v1/targets, no secret, only where
 * each secret is read from), each with links to its imports and to what SCIM changed on it, and
 * a Check button that asks it live: reachable, answer time, and its numbers of users, groups
 * and ACLs.
 */
import { api, segment } from './api.js';
import { fill, h, notice, table } from './dom.js';
import { loadTargets } from './target-view.js';

export async function targetsPage(root, { signal }) {
  const targets = await loadTargets(signal);
  root.append(
    h('h1', null, 'Targets'),
    h(
      'p',
      { class: 'muted' },
      'The admin servers imports, exports and migrations may name (PORTER_TARGETS_FILE, and the ADMIN_* variables as "default"). Secrets are never shown, only where each is read from.',
    ),
    targets.length === 0
      ? h('p', null, 'No targets.')
      : table(
          'Targets',
          ['Name', 'URL', 'Sign-in', 'Limits', 'Imports', 'Check', ''],
          targets.map((target) => row(target, signal)),
          { class: 'targets' },
        ),
  );
}

function row(target, signal) {
  const result = h('div', { class: 'check-result', 'aria-live': 'polite' }, '—');
  const check = h(
    'button',
    {
      type: 'button',
      class: 'secondary small',
      'aria-label': `Check target ${target.name}`,
      onclick: async () => {
        check.disabled = true;
        fill(result, h('span', { class: 'muted' }, 'Checking…'));
        try {
          const answer = await api(`/v1/targets/${segment(target.name)}/check?counts=true`, {
            signal,
          });
          fill(result, checkText(answer));
        } catch (error) {
          if (!signal.aborted) fill(result, notice('error', error.message));
        } finally {
          check.disabled = false;
        }
      },
    },
    'Check',
  );
  return {
    props: { 'data-target': target.name },
    cells: [
      h(
        'div',
        null,
        h('strong', null, target.name),
        target.readOnly ? [' ', h('span', { class: 'badge read-only' }, 'read-only')] : undefined,
        target.description ? h('div', { class: 'muted' }, target.description) : undefined,
      ),
      h('span', { class: 'url' }, target.url),
      h(
        'div',
        null,
        signInText(target),
        target.problem ? h('div', { class: 'notice error' }, target.problem) : undefined,
      ),
      limitsText(target),
      importLinks(target),
      result,
      check,
    ],
  };
}

/** Links to the target's imports, and to what SCIM changed on it (with who sent it). */
function importLinks(target) {
  const name = encodeURIComponent(target.name);
  return h(
    'div',
    { class: 'import-links' },
    h('a', { href: `#/imports?target=${name}`, 'aria-label': `Imports of ${target.name}` }, 'all'),
    ' · ',
    h(
      'a',
      {
        href: `#/imports?source=scim&target=${name}`,
        'aria-label': `SCIM changes of ${target.name}`,
      },
      'SCIM changes',
    ),
  );
}

/** "apiKey from env:NEW_DAM_KEY", "basic as porter from file:/run/secret". */
function signInText(target) {
  const parts = [target.auth ?? 'none'];
  if (target.user) parts.push(`as ${target.user}`);
  if (target.secrets?.length) parts.push(`from ${target.secrets.join(', ')}`);
  return parts.join(' ');
}

function limitsText(target) {
  return (
    [
      target.maxRps ? `${target.maxRps} requests/s` : undefined,
      target.maxInFlight ? `${target.maxInFlight} in flight` : undefined,
    ]
      .filter(Boolean)
      .join(' · ') || '—'
  );
}

/** "reachable · 12 ms · 3 users · 2 groups · 1 ACLs", or why not. */
function checkText(answer) {
  if (!answer.ok) {
    return h(
      'span',
      { class: 'check bad' },
      h('strong', null, 'not reachable'),
      answer.reason ? `: ${answer.reason}` : '',
      answer.answerMs !== undefined ? ` (${answer.answerMs} ms)` : '',
    );
  }
  const counts = answer.counts ?? {};
  return h(
    'span',
    { class: 'check good' },
    [
      'reachable',
      `${answer.answerMs} ms`,
      ...[
        ['users', 'users'],
        ['groups', 'groups'],
        ['acls', 'ACLs'],
      ]
        .filter(([key]) => counts[key] !== undefined)
        .map(([key, text]) => `${counts[key]} ${text}`),
    ].join(' · '),
  );
}
