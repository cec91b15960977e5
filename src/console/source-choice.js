/**
 * The new import page's other origin of rows: a directory source (GET /v1/sources), read by the
 * server when the import starts (POST /v1/source-imports), with its mapping and whether to read
 * only the entries changed since the last read. A source has no file to preview: its columns
 * are the directory's attribute names, so its mapping is given whole (loaded or typed).
 */
import { api } from './api.js';
import { field, h } from './dom.js';

/** The sources this porter reads (name, URL, anchor, problem; never a secret), or none. */
export function loadSources(signal) {
  return api('/v1/sources', { signal }).catch(() => []);
}

function optionText(source) {
  const notes = [source.groups ? 'users and groups' : 'users', source.problem ? 'unusable' : ''];
  return `${source.name} — ${source.url} (${notes.filter(Boolean).join(', ')})`;
}

/**
 * The source's part of the form: `element` (hidden until chosen), and `body()`, the source's
 * fields of the request, or a string saying what is missing.
 */
export function sourceChoice(sources) {
  const picker = h(
    'select',
    { id: 'source', name: 'source' },
    sources.map((source) => h('option', { value: source.name }, optionText(source))),
  );
  const incremental = h('input', { type: 'checkbox', id: 'incremental' });
  const mappingText = h('textarea', {
    id: 'sourceMapping',
    rows: 8,
    cols: 70,
    spellcheck: false,
    placeholder: '{ "columns": { "uid": "username", "mail": "email" }, "ignore": ["dn"] }',
  });
  const mappingFile = h('input', {
    type: 'file',
    id: 'sourceMappingFile',
    accept: '.json,application/json',
  });
  mappingFile.addEventListener('change', async () => {
    const file = mappingFile.files?.[0];
    if (file) mappingText.value = await file.text();
  });
  const note = h('p', { class: 'hint', 'aria-live': 'polite' });
  const showProblem = () => {
    const chosen = sources.find((source) => source.name === picker.value);
    note.textContent = chosen?.problem
      ? `Cannot be used: ${chosen.problem}`
      : chosen
        ? `Read by the server when the import starts; a person is matched by ${chosen.anchorAttribute} unless the mapping names an anchor.`
        : '';
  };
  picker.addEventListener('change', showProblem);
  showProblem();

  const element = h(
    'fieldset',
    { hidden: true },
    h('legend', null, 'Directory source'),
    h(
      'div',
      { class: 'row' },
      field('Source', picker),
      field('Only changes since the last read', incremental),
    ),
    note,
    h('div', { class: 'row' }, field('Mapping file of the source', mappingFile)),
    field(
      'Mapping (JSON)',
      mappingText,
      "Columns are the directory's attribute names (dn, uid, mail …); see docs/sources.md.",
    ),
  );

  function body() {
    if (!picker.value) return 'Choose a source.';
    const text = mappingText.value.trim();
    let mapping;
    if (text !== '') {
      try {
        mapping = JSON.parse(text);
      } catch (error) {
        return `Mapping: not valid JSON (${error.message}).`;
      }
    }
    return {
      source: picker.value,
      incremental: incremental.checked,
      ...(mapping !== undefined ? { mapping } : {}),
    };
  }

  return { element, body };
}
