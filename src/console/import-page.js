/**
 * One import: live state, counts and progress; its failed records; report downloads; cancel,
 * resume, retry. A dry run (or a sync held for approval) shows its plan: what it writes, counts
 * per action, its locks and deletes, then its other records with their field-level changes, and
 * the button that carries it out once the operator has typed the counts.
 */
import { api, download, segment } from './api.js';
import { factList, field, fill, h, notice, poll, showTime, showValue, table } from './dom.js';
import { countsText, FINAL_STATES, progressBar, stateBadge } from './import-view.js';
import { errorNotice, targetText } from './target-view.js';

const PAGE = 100;

/** Actions that take something away: a plan shows them first, and its approval names them. */
const REMOVALS = ['delete', 'lock'];

/** Text compared as the server compares a confirmation: case, spaces and commas aside. */
function normalized(text) {
  return text
    .trim()
    .toLowerCase()
    .replace(/\s*,\s*/g, ', ')
    .replace(/\s+/g, ' ');
}

export async function importPage(root, { signal, meta }, importId) {
  const recordActions = meta.recordActions ?? ['create', 'update', 'delete', 'unchanged'];
  const base = `/v1/imports/${segment(importId)}`;
  const heading = h('h1', null, `Import ${importId}`);
  const summary = h('div', { class: 'summary' });
  const actions = h('div', { class: 'actions' });
  const actionStatus = h('div');
  const downloads = h('div', { class: 'actions' });
  const failedArea = h('section', { 'aria-labelledby': 'failed-title' });
  const planArea = h('section', { 'aria-labelledby': 'plan-title' });
  const status = h('div');
  root.append(heading, status, summary, actions, actionStatus, planArea, failedArea, downloads);

  let lastText = '';
  let failedShownFor = -1;
  let planShownFor = '';

  poll(
    async () => {
      const info = await api(base, { signal });
      fill(status);
      const text = JSON.stringify({ ...info, progress: undefined, updatedAt: undefined });
      if (text !== lastText) {
        lastText = text;
        renderSummary(info);
        await renderActions(info);
        renderDownloads(info);
      } else {
        summary.querySelector('.rate')?.replaceChildren(rateText(info));
      }
      const failed = (info.counts?.failed ?? 0) + (info.counts?.unprocessed ?? 0);
      if (failed !== failedShownFor && (failed > 0 || failedShownFor > 0)) {
        failedShownFor = failed;
        await renderFailed(failed);
      }
      const isPlan = info.options?.dryRun === true || info.state === 'held';
      const planKey = `${info.state}:${info.done}`;
      if (isPlan && planKey !== planShownFor && (info.settled || info.state === 'held')) {
        planShownFor = planKey;
        await renderPlan(info);
      }
      // a final import stops polling once every record has its result
      return !(FINAL_STATES.has(info.state) && info.settled);
    },
    1000,
    signal,
    (error) => fill(status, notice('error', error.message)),
  );

  function renderSummary(info) {
    const options = info.options ?? {};
    const facts = [
      ['State', stateBadge(info.state)],
      ['Reason', info.reason],
      ['Source', info.source],
      ['Target', targetText(options.target, options.targetUrl, true)],
      ['Resource', options.resource],
      [
        'Mode',
        `${options.mode}${options.dryRun ? ' (dry run)' : ''}${options.stream ? ' (streamed)' : ''}`,
      ],
      ['Records', countsText(info)],
      ['Lookup', info.lookup ? `${info.lookup.mode} (${info.lookup.why})` : undefined],
      ['Sync', info.sync ? syncText(info) : undefined],
      [
        'Retry of',
        info.retryOf
          ? h('a', { href: `#/imports/${segment(info.retryOf)}` }, info.retryOf)
          : undefined,
      ],
      [info.sync?.approvedFrom ? 'Writes the held sync' : 'Applies', importLink(info.applyOf)],
      ['Undoes', importLink(info.undoOf)],
      ['Approved', info.approvedAt ? showTime(info.approvedAt) : undefined],
      ['Written by', importLink(info.writtenBy)],
      ['Undone by', importLink(info.undoneBy)],
      ['Why', whyList(info)],
      ['Created', showTime(info.createdAt)],
      ['Finished', info.finishedAt ? showTime(info.finishedAt) : undefined],
    ];
    fill(
      summary,
      progressBar(info),
      h('p', { class: 'rate muted' }, rateText(info)),
      factList(facts),
    );
  }

  async function renderActions(info) {
    const buttons = [];
    const final = FINAL_STATES.has(info.state);
    // a held import's Approve and Cancel stand under its plan
    if (!final && info.state !== 'held') {
      buttons.push(button('Cancel import', () => act('DELETE', base, 'Cancelled.'), 'danger'));
    }
    if (info.state === 'paused')
      buttons.push(button('Resume', () => act('POST', `${base}/resume`, 'Resumed.')));
    const failed = (info.counts?.failed ?? 0) + (info.counts?.unprocessed ?? 0);
    let leftOutNote;
    if (final && info.settled && failed > 0 && !info.options?.dryRun && !info.undoOf) {
      // a retry sends only what it can mend: never a duplicate, an invalid or a refused record
      const selection = await api(`${base}/retry`, { signal });
      if (selection.retryable > 0) {
        buttons.push(
          button(
            `Retry ${selection.retryable} failed`,
            () => act('POST', `${base}/retry`, 'Retry started.'),
            'secondary',
          ),
        );
      }
      if (selection.leftOut.total > 0) leftOutNote = leftOutText(selection.leftOut);
    }
    const changed = changedCount(info);
    // a held sync's plan was written by another import, or by none: that one is undone
    if (final && info.settled && changed > 0 && !plansOnly(info)) {
      buttons.push(
        button(
          `Undo ${changed} changes`,
          () => {
            // a new import that writes to the directory: asked once, naming what it turns back
            if (!window.confirm(undoQuestion(info, changed))) return;
            act('POST', `${base}/undo`, 'Undo started.');
          },
          'danger',
        ),
      );
    }
    fill(actions, ...buttons, leftOutNote);
  }

  function renderDownloads(info) {
    if (info.state === 'receiving') {
      fill(downloads);
      return;
    }
    const report = (label, query, name) =>
      button(
        label,
        () =>
          download(`${base}/results?${query}`, `${importId}-${name}`).catch((error) =>
            fill(actionStatus, notice('error', error.message)),
          ),
        'secondary',
      );
    fill(
      downloads,
      h('h2', { class: 'inline' }, 'Report'),
      report('All records (CSV)', 'format=csv', 'results.csv'),
      report('All records (JSON)', 'format=json', 'results.json'),
      report('Failed and unprocessed (CSV)', 'format=csv&status=failed,unprocessed', 'failed.csv'),
      report(
        'Failed and unprocessed (JSON)',
        'format=json&status=failed,unprocessed',
        'failed.json',
      ),
    );
  }

  async function renderFailed(count) {
    if (count === 0) {
      fill(failedArea);
      return;
    }
    const page = await api(`${base}/records?status=failed,unprocessed&limit=${PAGE}`, {
      signal,
    });
    fill(
      failedArea,
      h('h2', { id: 'failed-title' }, `Failed and unprocessed records (${count})`),
      table(
        'Failed and unprocessed records',
        ['Row', 'Key', 'Status', 'Field', 'Error'],
        page.records.map((record) => [
          String(record.sourceRow ?? record.row),
          record.key ?? '—',
          record.status,
          record.field ?? '—',
          h('span', null, h('code', null, record.errorCode ?? ''), ' ', record.error ?? ''),
        ]),
        { class: 'failed' },
      ),
      page.more
        ? h('p', { class: 'muted' }, `The first ${PAGE} are shown; download the report for all.`)
        : undefined,
    );
  }

  async function renderPlan(info) {
    const held = info.state === 'held';
    const appliable =
      info.options?.dryRun &&
      info.settled &&
      ['completed', 'completed_with_errors'].includes(info.state);
    const command = held ? 'approve' : appliable ? 'apply' : undefined;
    // what carrying the plan out writes, as the server counts it: the confirmation names it
    const preview = command ? await api(`${base}/${command}`, { signal }) : undefined;
    // the records that take something away lead: a plan is approved for its locks and deletes
    const [removals, others] = await Promise.all([
      api(`${base}/records?status=planned&action=${REMOVALS.join(',')}&limit=${PAGE}`, {
        signal,
      }),
      api(`${base}/records?status=planned&action=create,update&limit=${PAGE}`, { signal }),
    ]);
    const count = (actions) =>
      actions.reduce((sum, action) => sum + (info.actions?.[action] ?? 0), 0);
    const removalCount = count(REMOVALS);
    const otherCount = count(['create', 'update']);
    const actionCounts = [
      ...REMOVALS,
      ...recordActions.filter((action) => !REMOVALS.includes(action)),
    ].map((action) => [action, String(info.actions?.[action] ?? 0)]);
    const rows = (page) =>
      page.records.map((record) => [
        record.serverOnly ? 'server only' : String(record.sourceRow ?? record.row),
        record.key ?? '—',
        h('span', { class: `badge action-${record.action}` }, record.action ?? '—'),
        changesList(record),
      ]);
    const more = (page) =>
      page.more
        ? h('p', { class: 'muted' }, `The first ${PAGE} are shown; download the report for all.`)
        : undefined;
    const apply = [];
    if (command === 'approve') {
      apply.push(
        button('Approve…', () => confirmPlan(preview, 'Approve', 'Approved.')),
        button('Cancel', () => act('DELETE', base, 'Cancelled.'), 'danger'),
      );
    } else if (command === 'apply') {
      apply.push(button('Apply plan…', () => confirmPlan(preview, 'Apply', 'Applying the plan.')));
    }
    fill(
      planArea,
      h('h2', { id: 'plan-title' }, held ? 'Plan awaiting approval' : 'Plan'),
      preview
        ? h('p', { class: 'plan-writes' }, h('strong', null, `Writes: ${preview.confirm}`))
        : undefined,
      table('Records per action', ['Action', 'Records'], actionCounts, { class: 'narrow' }),
      removalCount > 0
        ? [
            h('h3', null, `Locks and deletes (${removalCount})`),
            table('Locks and deletes', ['Row', 'Key', 'Action', 'Changes'], rows(removals), {
              class: 'plan removals',
            }),
            more(removals),
          ]
        : undefined,
      h('h3', null, `Creates and updates (${otherCount})`),
      table(
        'Planned records and their changes',
        ['Row', 'Key', 'Action', 'Changes'],
        rows(others),
        {
          class: 'plan',
        },
      ),
      more(others),
      h('div', { class: 'actions' }, ...apply),
    );
  }

  /**
   * Asks before a plan is carried out: a dialog names what it writes, and its button works only
   * once the operator has typed those counts; the server checks them again.
   */
  function confirmPlan(preview, verb, done) {
    const typed = h('input', { type: 'text', autocomplete: 'off', spellcheck: false });
    const go = button(`${verb}: ${preview.confirm}`, () => {
      dialog.close();
      dialog.remove();
      act('POST', `${base}/${preview.command}`, done, { confirm: typed.value });
    });
    go.disabled = true;
    typed.addEventListener('input', () => {
      go.disabled = normalized(typed.value) !== normalized(preview.confirm);
    });
    const removals =
      preview.removals > 0
        ? `${preview.removals} of them lock or delete a record: they are listed first on the page.`
        : 'None of them locks or deletes a record.';
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-labelledby': 'confirm-title' },
      h('h2', { id: 'confirm-title' }, `${verb} the plan of ${importId}?`),
      h('p', null, `It writes ${preview.confirm}. ${removals}`),
      field(`Type “${preview.confirm}” to confirm`, typed),
      h(
        'div',
        { class: 'actions' },
        go,
        button(
          'Back',
          () => {
            dialog.close();
            dialog.remove();
          },
          'secondary',
        ),
      ),
    );
    dialog.addEventListener('close', () => dialog.remove());
    root.append(dialog);
    dialog.showModal();
  }

  async function act(method, path, done, json) {
    fill(actionStatus);
    try {
      const info = await api(path, { method, json, signal });
      if (info?.id && info.id !== importId) {
        location.hash = `#/imports/${segment(info.id)}`;
        return;
      }
      actionStatus.append(notice('info', done));
      lastText = '';
    } catch (error) {
      if (!signal.aborted) actionStatus.append(errorNotice(error));
    }
  }
}

function importLink(id) {
  return id ? h('a', { class: 'id', href: `#/imports/${segment(id)}` }, id) : undefined;
}

/** Only planned, never written itself: a dry run, or a held sync (held, cancelled or approved). */
function plansOnly(info) {
  return info.options?.dryRun === true || info.sync?.held === true || info.state === 'held';
}

/** Codes whose first message says why the run went wrong (the server, the import's stop). */
const RUN_CODES = new Set([
  'ADMIN_UNAVAILABLE',
  'ADMIN_CONNECTION_FAILED',
  'ADMIN_NO_ANSWER',
  'ADMIN_BAD_RESPONSE',
  'ADMIN_HTTP_ERROR',
  'PORTER_CANCELLED',
  'PORTER_FAILURE_LIMIT',
  'PORTER_BATCH_ABANDONED',
  'PORTER_SYNC_ABORTED',
  'PORTER_TARGET_UNKNOWN',
  'PORTER_TARGET_CHANGED',
  'PORTER_TARGET_READ_ONLY',
  'PORTER_TARGET_UNAVAILABLE',
  'PORTER_TARGET_UNREACHABLE',
  'PORTER_INTERNAL',
]);

/** Why records did not succeed: "12 unprocessed: PORTER_BATCH_ABANDONED — not sent: …". */
function whyList(info) {
  const problems = info.problems ?? [];
  const items = problems.map((problem) =>
    h(
      'li',
      { class: 'why' },
      `${problem.count} ${problem.status}: `,
      h('code', null, problem.code),
      problem.message && RUN_CODES.has(problem.code) ? ` ${problem.message}` : '',
    ),
  );
  const stopped = (info.counts?.unprocessed ?? 0) > 0 || info.state === 'failed';
  if (info.pausedBecause && info.state !== 'paused' && stopped) {
    items.push(h('li', { class: 'why' }, `paused on the way: ${info.pausedBecause}`));
  }
  return items.length > 0 ? h('ul', { class: 'why-list' }, items) : undefined;
}

/** Why a retry leaves records out, and how many of each code. */
function leftOutText(leftOut) {
  const codes = Object.entries(leftOut.byCode)
    .sort(([, a], [, b]) => b - a)
    .map(([code, count]) => `${count} ${code}`)
    .join(', ');
  const records = leftOut.total === 1 ? 'record is' : 'records are';
  return h(
    'p',
    { class: 'muted left-out' },
    `${leftOut.total} failed ${records} left out of a retry (${codes}): sent again, they would ` +
      'fail the same way or overwrite another record. Fix them in the file and import it again.',
  );
}

/** Records the import changed on the server: created, updated, deleted or locked. */
function changedCount(info) {
  const actions = info.actions ?? {};
  return ['create', 'update', 'delete', 'lock'].reduce(
    (sum, action) => sum + (actions[action] ?? 0),
    0,
  );
}

function undoQuestion(info, changed) {
  const actions = info.actions ?? {};
  const parts = [
    actions.create ? `delete the ${actions.create} records it created` : '',
    actions.update || actions.lock
      ? `restore the ${(actions.update ?? 0) + (actions.lock ?? 0)} records it updated or locked`
      : '',
    actions.delete ? `re-create the ${actions.delete} records it deleted` : '',
  ].filter(Boolean);
  return (
    `Undo ${info.id}? A new import will ${parts.join(', ')} (${changed} records). ` +
    'Records changed on the server since are left alone.'
  );
}

function button(text, onclick, kind) {
  return h('button', { type: 'button', class: kind, onclick }, text);
}

function rateText(info) {
  const progress = info.progress ?? {};
  if (FINAL_STATES.has(info.state) || !progress.ratePerSecond) return '';
  const eta =
    progress.etaSeconds !== undefined ? `, about ${Math.ceil(progress.etaSeconds)} s left` : '';
  return `${progress.ratePerSecond} records/s${eta}`;
}

function named(value, names) {
  if (!names) return showValue(value);
  const list = Array.isArray(value) ? value : [value];
  return (
    list
      .map((item) => (names[String(item)] ? `${names[String(item)]} (${item})` : showValue(item)))
      .join(', ') || '[]'
  );
}

function changesList(record) {
  if (record.action === 'create') return 'new record';
  if (record.action === 'delete') return 'removed';
  if (record.action === 'lock' && !record.changes?.length) return 'locked';
  if (!record.changes || record.changes.length === 0) return '—';
  return h(
    'ul',
    { class: 'changes' },
    record.changes.map((change) =>
      h(
        'li',
        null,
        h('strong', null, change.field),
        ': ',
        h('del', null, named(change.from, change.names)),
        ' → ',
        h('ins', null, named(change.to, change.names)),
      ),
    ),
  );
}

/** A sync's dry run past its threshold: a real run (or applying it) would be held. */
function wouldBeHeld(info) {
  const sync = info.sync;
  return info.options?.dryRun === true && (overThreshold(sync) || heldUnnamed(sync));
}

function overThreshold(sync) {
  return sync.locks + sync.deletes > sync.threshold;
}

/** Rows of the file failed without a key while the sync would lock or delete (src/sync/sync-options.ts). */
function heldUnnamed(sync) {
  return (sync.unnamed ?? 0) > 0 && sync.locks + sync.deletes > 0;
}

/** "2 of 3 in scope missing: 2 locks, 0 deletes, 0 spared; threshold 0 (held)". */
function syncText(info) {
  const sync = info.sync;
  const missing = info.options?.sync?.missing;
  return (
    `${sync.missing} of ${sync.inScope} server records in scope are not in the file` +
    `${missing ? ` (${missing})` : ''}: ${sync.locks} locks, ${sync.deletes} deletes, ` +
    `${sync.spared} spared; threshold ${sync.threshold}` +
    (sync.held && overThreshold(sync) ? ', passed: held' : '') +
    (sync.held && heldUnnamed(sync)
      ? `; held: ${sync.unnamed} failed rows name no key, and any may be one it would lock or delete`
      : '') +
    (wouldBeHeld(info) ? ', passed: a real run would be held' : '')
  );
}
