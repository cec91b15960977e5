/**
 * Targets (the named admin servers a job runs against) wherever the console shows or picks
 * one: the picker of the pages that start work, a job's target as text, and the refusals of
 * the target rules (read-only, unknown, changed, unavailable) as a clear message.
 */
import { api } from './api.js';
import { h, notice } from './dom.js';

export const DEFAULT_TARGET = 'default';

/** The targets this porter knows (GET /v1/targets): name, URL, readOnly, problem; no secret. */
export function loadTargets(signal) {
  return api('/v1/targets', { signal });
}

/** "second — http://dam.example.com (read-only)", an option of the picker. */
function optionText(target) {
  const notes = [target.readOnly ? 'read-only' : '', target.problem ? 'unusable' : ''].filter(
    Boolean,
  );
  return `${target.name} — ${target.url}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
}

/**
 * A labelled select of the targets: `default` chosen when there is one, else the only target,
 * else none (a first, empty choice asks for one; the server refuses work that names none).
 * `onChange(target)` runs now and on every change with the chosen target's summary (from the
 * list; undefined while none is chosen). Under the select, a note says when the target is
 * read-only (for work that `writes`: only a dry run may be started) or cannot be used.
 */
export function targetPicker(id, targets, { onChange, writes = true } = {}) {
  const list = targets;
  const chosen = list.some((target) => target.name === DEFAULT_TARGET)
    ? DEFAULT_TARGET
    : list.length === 1
      ? list[0].name
      : '';
  const control = h(
    'select',
    { id, name: 'target', required: true, 'aria-describedby': `${id}-note` },
    [
      ...(chosen === '' ? [h('option', { value: '', selected: true }, 'Choose a target…')] : []),
      ...list.map((target) =>
        h('option', { value: target.name, selected: target.name === chosen }, optionText(target)),
      ),
    ],
  );
  const note = h('span', { class: 'hint target-note', id: `${id}-note`, 'aria-live': 'polite' });
  const current = () => list.find((target) => target.name === control.value);
  const update = () => {
    const target = current();
    if (!target) {
      note.textContent =
        list.length === 0 ? 'No target is configured (PORTER_TARGETS_FILE).' : 'Choose a target.';
      note.classList.toggle('warn', true);
      onChange?.(target);
      return;
    }
    note.textContent = target.problem
      ? `Cannot be used: ${target.problem}`
      : target.readOnly
        ? writes
          ? 'Read-only: nothing is written to it; only a dry run can be started.'
          : 'Read-only: it can be read, never written.'
        : '';
    note.classList.toggle('warn', Boolean((writes && target.readOnly) || target.problem));
    onChange?.(target);
  };
  control.addEventListener('change', update);
  const element = h(
    'div',
    { class: 'field target-field' },
    h('label', { for: id }, 'Target'),
    control,
    note,
  );
  update();
  return { element, control, current };
}

/** A job's target as text: its name (`default` for jobs from before targets), with its URL. */
export function targetText(name, url, withUrl = false) {
  const shown = name ?? DEFAULT_TARGET;
  return withUrl && url ? `${shown} (${url})` : shown;
}

const TARGET_REFUSALS = {
  PORTER_TARGET_READ_ONLY: 'Refused: the target is read-only, nothing was written.',
  PORTER_TARGET_UNKNOWN: 'Refused: this porter does not know that target.',
  PORTER_TARGET_CHANGED: 'Refused: the target is configured differently now, nothing was sent.',
  PORTER_TARGET_UNAVAILABLE: 'Refused: the target cannot be used.',
};

/** An error as a message; a target's refusal gets a headline and its code. */
export function errorNotice(error) {
  const headline = TARGET_REFUSALS[error?.code];
  if (!headline) return notice('error', error.message);
  return notice('error', [
    h('strong', null, headline),
    ' ',
    error.message,
    ' ',
    h('code', null, error.code),
  ]);
}
