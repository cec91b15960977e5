/**
 * A new import: file, resource, mode and options; then the file's columns with a field picker
 * each (prefilled by porter's own matching) and a preview of its first records, before
 * anything is queued. The choices become the mapping porter reads (downloadable for the CLI).
 * Where directory sources are configured, the rows may come from one instead of a file
 * (source-choice.js): the same options, posted to /v1/source-imports.
 */
import { api, saveBlob } from './api.js';
import { field, fill, h, notice, select, showValue, table } from './dom.js';
import { loadSources, sourceChoice } from './source-choice.js';
import { errorNotice, loadTargets, targetPicker } from './target-view.js';

const IGNORE = '';
/** The parts of a mapping about its anchor, kept as loaded (docs/mapping.md#anchors). */
const ANCHOR_PARTS = ['anchor', 'anchorKey', 'join', 'createInactive'];

export async function newImportPage(root, { signal, meta }) {
  const state = {
    file: undefined,
    /** Columns of the last preview, and the choice made for each (field name, or IGNORE). */
    columns: [],
    choices: new Map(),
    preview: undefined,
    sequence: 0,
    /** The mapping's computed part: field → expression, tables, when, defaults (docs/mapping.md). */
    computed: { fields: {}, tables: {}, when: '', defaults: {} },
  };

  const fileInput = h('input', {
    type: 'file',
    id: 'file',
    name: 'file',
    accept: '.csv,.tsv,.txt,.json,.ndjson,.jsonl,text/csv,application/json',
  });
  const fileName = h('span', { class: 'file-name', 'aria-live': 'polite' }, 'No file chosen');
  const resource = select('resource', Object.keys(meta.resources), 'users');
  const mode = select('mode', meta.modes, meta.modes.includes('upsert') ? 'upsert' : meta.modes[0]);
  const dryRun = h('input', { type: 'checkbox', id: 'dryRun', name: 'dryRun' });
  const lookup = select('lookup', [['', 'server default'], ...meta.lookups], '');
  const delimiter = select(
    'delimiter',
    [
      ['', 'detect'],
      ...meta.delimiters.map((value) => [
        value === '\t' ? 'tab' : value,
        value === '\t' ? 'tab' : value,
      ]),
    ],
    '',
  );
  // Excel's CSV is windows-1252 on a Western Windows; UTF-16 with its byte order mark is found alone
  const encoding = select(
    'encoding',
    [
      ['', 'UTF-8 (UTF-16 by its mark)'],
      ['windows-1252', 'windows-1252 (Excel CSV)'],
      ['latin1', 'latin1'],
      ['utf-16le', 'UTF-16 LE'],
      ['utf-16be', 'UTF-16 BE'],
    ],
    '',
  );
  const listSeparator = h('input', {
    type: 'text',
    id: 'listSeparator',
    value: meta.listSeparator,
    size: 3,
    maxlength: 3,
  });
  const batchSize = h('input', {
    type: 'number',
    id: 'batchSize',
    value: '100',
    min: '1',
    max: '10000',
  });
  const maxFailures = h('input', {
    type: 'text',
    id: 'maxFailures',
    placeholder: 'e.g. 50 or 5%',
    size: 10,
  });
  const emptyAsClear = h('input', { type: 'checkbox', id: 'emptyAsClear' });
  const allowAdmin = h('input', { type: 'checkbox', id: 'allowAdmin' });
  const allowLookalike = h('input', { type: 'checkbox', id: 'allowLookalike' });

  // sync only: what happens to the server's records the file leaves out
  const missing = select('missing', [['', 'resource default'], ...(meta.missingActions ?? [])], '');
  const maxDeletes = h('input', {
    type: 'text',
    id: 'maxDeletes',
    placeholder: 'e.g. 10 or 2%',
    size: 10,
  });
  const scopeGroup = h('input', { type: 'text', id: 'scopeGroup' });
  const scopeMatch = h('input', {
    type: 'text',
    id: 'scopeMatch',
    placeholder: 'e.g. @example\\.com$',
  });
  // marked as it is typed; Start import says why (native validation would only show a bubble)
  scopeMatch.addEventListener('input', () => {
    scopeMatch.setAttribute('aria-invalid', String(scopeMatchProblem(scopeMatch.value) !== ''));
  });
  const protect = h('textarea', { id: 'protect', rows: 3, cols: 30 });
  const syncOptions = h(
    'fieldset',
    { hidden: true },
    h('legend', null, 'Sync'),
    h(
      'p',
      { class: 'muted' },
      'A sync upserts the file and handles the server records it leaves out. Past the deletion threshold nothing is written: the sync is held for approval.',
    ),
    h(
      'div',
      { class: 'row' },
      field('Records the file leaves out', missing),
      field('Most locks and deletes without approval', maxDeletes),
      field('Only members of group', scopeGroup),
      field('Only keys matching', scopeMatch),
    ),
    field('Protected keys (one per line)', protect, 'A sync never touches these records.'),
  );
  const showSync = () => {
    syncOptions.hidden = mode.value !== 'sync';
  };
  mode.addEventListener('change', showSync);

  const computedArea = h('div');
  const mappingFile = h('input', {
    type: 'file',
    id: 'mappingFile',
    accept: '.json,application/json',
  });
  const whenInput = h('input', {
    type: 'text',
    id: 'when',
    size: 60,
    placeholder: "e.g. `Worker Type` != 'Contractor'",
  });
  const addFieldPicker = h('select', { id: 'addField', 'aria-label': 'Field to compute' });
  const addFieldButton = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => addComputedField() },
    'Compute field',
  );
  let editTimer;
  /** An edit re-reads the preview once typing pauses. */
  const refreshSoon = () => {
    clearTimeout(editTimer);
    editTimer = setTimeout(() => void refresh(), 300);
  };
  whenInput.addEventListener('input', () => {
    state.computed.when = whenInput.value;
    refreshSoon();
  });
  mappingFile.addEventListener('change', () => {
    if (mappingFile.files?.[0]) void loadMappingFile(mappingFile.files[0]);
  });
  const columnsArea = h('div');
  const previewArea = h('div', { 'aria-live': 'polite' });
  const submitStatus = h('div');
  const startButton = h('button', { type: 'submit', disabled: true }, 'Start import');
  const mappingButton = h(
    'button',
    { type: 'button', class: 'secondary', disabled: true, onclick: () => downloadMapping() },
    'Download mapping',
  );

  const drop = h(
    'div',
    { class: 'drop' },
    field('File (CSV, JSON or NDJSON)', fileInput, 'Choose a file, or drop one here.'),
    fileName,
  );
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    const file = event.dataTransfer?.files?.[0];
    if (file) chooseFile(file);
  });
  fileInput.addEventListener('change', () => {
    if (fileInput.files?.[0]) chooseFile(fileInput.files[0]);
  });
  resource.addEventListener('change', () => {
    state.choices.clear();
    state.columns = [];
    renderComputed();
    void refresh();
  });
  for (const control of [mode, delimiter, encoding, listSeparator, emptyAsClear]) {
    control.addEventListener('change', () => void refresh());
  }
  const startText = () => {
    startButton.textContent = dryRun.checked ? 'Start dry run' : 'Start import';
  };
  dryRun.addEventListener('change', startText);
  // on a read-only target only a dry run may be started
  const target = targetPicker('target', await loadTargets(signal), {
    onChange: (chosen) => {
      if (chosen?.readOnly) dryRun.checked = true;
      dryRun.disabled = Boolean(chosen?.readOnly);
      startText();
    },
  });

  // where the rows come from: a file, or a directory source the server reads
  const sources = await loadSources(signal);
  const directory = sourceChoice(sources);
  const fromFile = h('input', { type: 'radio', name: 'origin', id: 'origin-file', checked: true });
  const fromSource = h('input', { type: 'radio', name: 'origin', id: 'origin-source' });
  const origin =
    sources.length === 0
      ? undefined
      : h(
          'div',
          { class: 'row', role: 'radiogroup', 'aria-label': 'Read the rows' },
          h(
            'div',
            { class: 'field check' },
            fromFile,
            h('label', { for: 'origin-file' }, 'From a file'),
          ),
          h(
            'div',
            { class: 'field check' },
            fromSource,
            h('label', { for: 'origin-source' }, 'From a directory source'),
          ),
        );
  const delimiterField = field('Delimiter', delimiter);
  const encodingField = field('Encoding', encoding);
  const columnsSection = h(
    'section',
    { 'aria-labelledby': 'columns-title' },
    h('h2', { id: 'columns-title' }, 'Columns'),
    columnsArea,
  );
  const previewSection = h(
    'section',
    { 'aria-labelledby': 'preview-title' },
    h('h2', { id: 'preview-title' }, 'Preview'),
    previewArea,
  );

  const form = h(
    'form',
    { class: 'new-import', onsubmit: (event) => void submit(event) },
    h('h1', null, 'New import'),
    h(
      'fieldset',
      null,
      h('legend', null, 'Upload'),
      origin,
      drop,
      directory.element,
      h('div', { class: 'row' }, target.element, field('Resource', resource), field('Mode', mode)),
    ),
    h(
      'fieldset',
      null,
      h('legend', null, 'Options'),
      h(
        'div',
        { class: 'row' },
        field('Dry run (plan only, nothing written)', dryRun),
        field('Empty cells clear fields', emptyAsClear),
        field('Allow administrators', allowAdmin),
        field('Allow look-alike keys', allowLookalike),
      ),
      h(
        'div',
        { class: 'row' },
        field('Lookup', lookup),
        delimiterField,
        encodingField,
        field('List separator', listSeparator),
        field('Batch size', batchSize),
        field('Stop after failures', maxFailures),
      ),
    ),
    syncOptions,
    columnsSection,
    h(
      'section',
      { 'aria-labelledby': 'computed-title', id: 'computed-section' },
      h('h2', { id: 'computed-title' }, 'Computed fields'),
      h(
        'p',
        { class: 'muted' },
        "Fields computed by JSONata expressions over the row: columns by their header (names with spaces in backticks), $row, and porter's functions ($table, $unique, $normalizeDiacritics, $parseDate, $formatDate). See docs/mapping.md.",
      ),
      h(
        'div',
        { class: 'row' },
        field('Load a mapping file', mappingFile),
        field('Read a row only when', whenInput),
      ),
      computedArea,
      h('div', { class: 'row' }, field('Field', addFieldPicker), addFieldButton),
    ),
    previewSection,
    h('div', { class: 'actions' }, startButton, mappingButton),
    submitStatus,
  );
  columnsArea.append(h('p', { class: 'muted' }, 'Choose a file to see its columns.'));
  root.append(form);
  renderComputed();
  const computedSection = form.querySelector('#computed-section');
  for (const radio of [fromFile, fromSource]) radio.addEventListener('change', showOrigin);

  function usesSource() {
    return fromSource.checked;
  }

  /** A source has no file: its upload, file options, columns and preview are hidden. */
  function showOrigin() {
    const source = usesSource();
    directory.element.hidden = !source;
    for (const part of [drop, delimiterField, encodingField, columnsSection, computedSection]) {
      part.hidden = source;
    }
    previewSection.hidden = source;
    mappingButton.hidden = source;
    // a directory holds users and groups, not ACLs
    for (const option of resource.options) option.disabled = source && option.value === 'acls';
    if (source && resource.value === 'acls') resource.value = 'users';
    startButton.disabled = source ? false : !state.preview || Boolean(state.preview.problem);
    fill(submitStatus);
    // the file's preview, read again under the options changed meanwhile
    if (!source) void refresh();
  }

  function renderComputed() {
    const fields = (meta.resources[resource.value] ?? [])
      .filter((item) => !item.id && !item.service)
      .map((item) => item.name);
    const rows = Object.entries(state.computed.fields).map(([name, source]) => {
      const editor = h('textarea', {
        id: `expr-${name}`,
        rows: 2,
        cols: 70,
        'aria-label': `Expression for ${name}`,
      });
      editor.value = source;
      editor.addEventListener('input', () => {
        state.computed.fields[name] = editor.value;
        refreshSoon();
      });
      const remove = h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            delete state.computed.fields[name];
            renderComputed();
            void refresh();
          },
        },
        'Remove',
      );
      return [h('span', { class: 'column-name' }, name), editor, remove];
    });
    fill(
      computedArea,
      rows.length === 0
        ? h('p', { class: 'muted' }, 'No computed field.')
        : table('Computed fields and their expressions', ['Field', 'Expression', ''], rows),
    );
    const free = fields.filter((name) => !Object.hasOwn(state.computed.fields, name));
    fill(addFieldPicker, ...free.map((name) => h('option', { value: name }, name)));
    whenInput.value = state.computed.when;
  }

  function addComputedField() {
    const name = addFieldPicker.value;
    if (!name) return;
    state.computed.fields[name] = '';
    renderComputed();
    document.getElementById(`expr-${name}`)?.focus();
  }

  async function loadMappingFile(file) {
    try {
      const json = JSON.parse(await file.text());
      state.computed = {
        fields: { ...(json.fields ?? {}) },
        tables: { ...(json.tables ?? {}) },
        when: json.when ?? '',
        defaults: { ...(json.defaults ?? {}) },
        anchor: ANCHOR_PARTS.filter((part) => json[part] !== undefined).map((part) => [
          part,
          json[part],
        ]),
      };
      state.choices.clear();
      for (const [column, target] of Object.entries(json.columns ?? {})) {
        state.choices.set(column, target);
      }
      for (const column of json.ignore ?? []) state.choices.set(column, IGNORE);
      // how the feed is written comes with its mapping, as for porter import and HTTP
      if (typeof json.listSeparator === 'string') listSeparator.value = json.listSeparator;
      if (typeof json.delimiter === 'string') {
        delimiter.value = json.delimiter === '\t' ? 'tab' : json.delimiter;
      }
      renderComputed();
      void refresh();
    } catch (error) {
      fill(previewArea, notice('error', `${file.name}: not a mapping file (${error.message})`));
    }
  }

  function chooseFile(file) {
    state.file = file;
    state.columns = [];
    state.choices.clear();
    fileName.textContent = `${file.name} (${formatBytes(file.size)})`;
    void refresh();
  }

  function currentMapping() {
    const mapping = { columns: {}, ignore: [] };
    const ignored = new Set();
    for (const column of state.columns) {
      const choice = state.choices.get(column.name);
      if (choice === undefined) continue;
      const key = column.name.trim().toLowerCase();
      if (choice === IGNORE) {
        if (key !== '' && !ignored.has(key)) {
          ignored.add(key);
          mapping.ignore.push(column.name);
        }
      } else if (choice.toLowerCase() !== key) {
        mapping.columns[column.name] = choice;
      }
    }
    return mapping;
  }

  function fullMapping() {
    const mapping = currentMapping();
    const { fields, tables, when, defaults } = state.computed;
    if (Object.keys(defaults).length > 0) mapping.defaults = defaults;
    if (Object.keys(fields).length > 0) mapping.fields = fields;
    if (Object.keys(tables).length > 0) mapping.tables = tables;
    if (when.trim() !== '') mapping.when = when;
    for (const [part, value] of state.computed.anchor ?? []) mapping[part] = value;
    return mapping;
  }

  /** The expressions (fields, when, anchor) that read a column: by `Name` or by a bare name. */
  function expressionsUsing(column) {
    const quoted = `\`${column}\``;
    const bare = /^[A-Za-z_][A-Za-z0-9_]*$/.test(column)
      ? new RegExp(`(^|[^A-Za-z0-9_$.\`'"])${column}($|[^A-Za-z0-9_(])`)
      : undefined;
    const sources = [
      ...Object.entries(state.computed.fields),
      ['when', state.computed.when],
      ...(state.computed.anchor ?? []).filter(([part]) => part === 'anchor'),
    ];
    return sources
      .filter(([, source]) => typeof source === 'string')
      .filter(([, source]) => source.includes(quoted) || (bare !== undefined && bare.test(source)))
      .map(([name]) => name);
  }

  function hasMapping(mapping) {
    return Object.values(mapping).some((part) =>
      typeof part === 'string' ? part !== '' : Object.keys(part).length > 0,
    );
  }

  function commonFields(form) {
    form.append('resource', resource.value);
    form.append('mode', mode.value);
    if (delimiter.value) form.append('delimiter', delimiter.value);
    if (encoding.value) form.append('encoding', encoding.value);
    if (listSeparator.value) form.append('listSeparator', listSeparator.value);
    form.append('emptyAsClear', String(emptyAsClear.checked));
    const mapping = fullMapping();
    if (hasMapping(mapping)) form.append('mapping', JSON.stringify(mapping));
  }

  async function refresh() {
    if (!state.file || usesSource()) return;
    const sequence = ++state.sequence;
    const head = state.file.slice(0, meta.previewHeadBytes);
    const form = new FormData();
    commonFields(form);
    form.append('partial', String(state.file.size > meta.previewHeadBytes));
    form.append('file', head, state.file.name);
    fill(previewArea, h('p', { class: 'muted' }, 'Reading the first records…'));
    try {
      const preview = await api('/v1/previews', { method: 'POST', form, signal });
      if (sequence !== state.sequence) return;
      // a first look: every column gets porter's own match, or is ignored when nothing matches
      let again = false;
      for (const column of preview.columns) {
        if (!state.choices.has(column.name)) {
          state.choices.set(
            column.name,
            column.suggested && column.suggested !== 'ignore' ? column.suggested : IGNORE,
          );
          if (column.target === 'unknown') again = true;
        }
      }
      state.columns = preview.columns;
      state.preview = preview;
      if (again) {
        void refresh();
        return;
      }
      renderColumns();
      renderPreview();
    } catch (error) {
      if (signal.aborted || sequence !== state.sequence) return;
      state.preview = undefined;
      fill(previewArea, notice('error', error.message));
      startButton.disabled = true;
    }
  }

  function renderColumns() {
    const preview = state.preview;
    const first = preview.records[0]?.input ?? {};
    const rows = preview.columns.map((column, index) => {
      // a column no field takes may still feed the mapping's expressions: say which
      const users = expressionsUsing(column.name);
      const fieldOptions = [
        [IGNORE, users.length > 0 ? `(read by ${users.join(', ')})` : '(ignore)'],
        ...preview.fields.map((item) => [item.name, fieldLabel(item)]),
      ];
      const picker = select(
        `column-${index}`,
        fieldOptions,
        state.choices.get(column.name) ?? IGNORE,
      );
      picker.setAttribute('aria-label', `Field for column ${column.name}`);
      picker.addEventListener('change', () => {
        state.choices.set(column.name, picker.value);
        void refresh();
      });
      const note =
        column.suggested === null
          ? h('span', { class: 'hint' }, 'no field of this name')
          : column.suggested !== 'ignore' && picker.value !== column.suggested
            ? h('span', { class: 'hint' }, `matches ${column.suggested} by name`)
            : undefined;
      return [
        h('span', { class: 'column-name' }, column.name),
        h('div', null, picker, ' ', note),
        showValue(first[column.name]),
      ];
    });
    fill(
      columnsArea,
      h(
        'p',
        { class: 'muted' },
        `${preview.format.toUpperCase()}${preview.delimiter ? `, delimiter ${preview.delimiter === '\t' ? 'tab' : `"${preview.delimiter}"`}` : ''}, ${preview.columns.length} columns.`,
      ),
      table('Columns and the field each one fills', ['Column', 'Field', 'First value'], rows),
    );
    mappingButton.disabled = false;
  }

  function renderPreview() {
    const preview = state.preview;
    const shown = preview.columns.map((column) => column.name);
    const computed = Object.keys(state.computed.fields);
    const rows = preview.records.map((record) => ({
      props: { class: record.valid ? 'ok' : record.skipped ? 'skipped' : 'bad' },
      cells: [
        String(record.row),
        record.valid ? 'ok' : record.skipped ? 'skipped' : 'invalid',
        record.valid
          ? (record.warnings ?? []).join('; ') || '—'
          : (record.error ?? record.errorCode),
        ...computed.map((name) => (record.valid ? showValue(record.record?.[name]) : '')),
        ...shown.map((name) => showValue(record.input[name])),
      ],
    }));
    const invalid = preview.records.filter((record) => !record.valid && !record.skipped).length;
    const skipped = preview.records.filter((record) => record.skipped).length;
    fill(
      previewArea,
      preview.problem ? notice('error', preview.problem.message) : undefined,
      h(
        'p',
        { class: 'muted' },
        `First ${preview.records.length} records: ${preview.records.length - invalid - skipped} valid, ${invalid} invalid, ${skipped} skipped. Look-ups and references are checked when the import runs.`,
      ),
      table(
        'First records of the file',
        ['Row', 'Check', 'Error', ...computed.map((name) => `→ ${name}`), ...shown],
        rows,
        {
          class: 'preview',
        },
      ),
    );
    // a problem (a column without a field, two columns for one field) would stop the import
    startButton.disabled = Boolean(preview.problem);
  }

  function downloadMapping() {
    const mapping = fullMapping();
    const text = `${JSON.stringify({ description: `${resource.value} from ${state.file?.name ?? 'an upload'}`, ...mapping }, null, 2)}\n`;
    saveBlob(new Blob([text], { type: 'application/json' }), 'mapping.json');
  }

  /** The options both origins send, as fields (`add(name, value)`). */
  function optionFields(add) {
    if (target.control.value) add('target', target.control.value);
    add('resource', resource.value);
    add('mode', mode.value);
    if (listSeparator.value) add('listSeparator', listSeparator.value);
    add('emptyAsClear', emptyAsClear.checked);
    add('batchSize', batchSize.value || '100');
    add('dryRun', dryRun.checked);
    add('allowAdmin', allowAdmin.checked);
    add('allowLookalike', allowLookalike.checked);
    if (lookup.value) add('lookup', lookup.value);
    if (maxFailures.value.trim()) add('maxFailures', maxFailures.value.trim());
    if (mode.value === 'sync') {
      if (missing.value) add('missing', missing.value);
      if (maxDeletes.value.trim()) add('maxDeletes', maxDeletes.value.trim());
      if (scopeGroup.value.trim()) add('scopeGroup', scopeGroup.value.trim());
      if (scopeMatch.value.trim()) add('scopeMatch', scopeMatch.value.trim());
      if (protect.value.trim()) add('protect', protect.value);
    }
  }

  /** Starts the import of a directory source: the server reads it, then answers the import. */
  async function submitSource() {
    const chosen = directory.body();
    if (typeof chosen === 'string') {
      submitStatus.append(notice('error', chosen));
      return;
    }
    const json = { ...chosen };
    optionFields((name, value) => {
      json[name] = value;
    });
    startButton.disabled = true;
    submitStatus.append(notice('info', `Reading source ${chosen.source}…`));
    try {
      const info = await api('/v1/source-imports', { method: 'POST', json, signal });
      location.hash = `#/imports/${encodeURIComponent(info.id)}`;
    } catch (error) {
      if (signal.aborted) return;
      fill(submitStatus, errorNotice(error));
      startButton.disabled = false;
    }
  }

  async function submit(event) {
    event.preventDefault();
    fill(submitStatus);
    const scopeProblem = mode.value === 'sync' ? scopeMatchProblem(scopeMatch.value) : '';
    if (scopeProblem) {
      submitStatus.append(notice('error', `Only keys matching: ${scopeProblem}`));
      scopeMatch.focus();
      return;
    }
    if (usesSource()) {
      await submitSource();
      return;
    }
    if (!state.file) {
      submitStatus.append(notice('error', 'Choose a file first.'));
      fileInput.focus();
      return;
    }
    const form = new FormData();
    // a file's own options and mapping first, then the options both origins send
    if (delimiter.value) form.append('delimiter', delimiter.value);
    if (encoding.value) form.append('encoding', encoding.value);
    const mapping = fullMapping();
    if (hasMapping(mapping)) form.append('mapping', JSON.stringify(mapping));
    optionFields((name, value) => form.append(name, String(value)));
    form.append('file', state.file, state.file.name);
    startButton.disabled = true;
    submitStatus.append(notice('info', 'Uploading…'));
    try {
      const info = await api('/v1/imports', { method: 'POST', form, signal });
      location.hash = `#/imports/${encodeURIComponent(info.id)}`;
    } catch (error) {
      if (signal.aborted) return;
      fill(submitStatus, errorNotice(error));
      startButton.disabled = false;
    }
  }
}

/**
 * Why a scope pattern is not a regular expression, or '' (the server checks it again, with its
 * limits on length and nested repetition).
 */
function scopeMatchProblem(text) {
  const pattern = text.trim();
  if (pattern === '') return '';
  try {
    new RegExp(pattern, 'u');
    return '';
  } catch (error) {
    const wildcard = /^[*?]/.test(pattern)
      ? ' It is a regular expression, not a wildcard: write .* for "anything", e.g. @example\\.com$.'
      : '';
    return `not a regular expression (${error.message}).${wildcard}`;
  }
}

function fieldLabel(item) {
  const notes = [item.key ? 'key' : '', item.id ? 'id' : '', item.service ? 'not sent' : ''].filter(
    Boolean,
  );
  return notes.length > 0 ? `${item.name} (${notes.join(', ')})` : item.name;
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
