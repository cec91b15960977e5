/**
 * Element building for the console. Every string child becomes a text node and attributes are
 * set one by one: nothing from the server is ever parsed as HTML.
 */

/** Creates `tag` with properties, attributes, `on*` listeners and children (text or nodes). */
export function h(tag, props, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      element.className = value;
    } else if (typeof value !== 'string' && name in element) {
      element[name] = value;
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

/** Appends children: nodes as they are, anything else as text. */
export function append(parent, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
  return parent;
}

/** A value as one line of text: lists joined, objects as JSON, empty as an em dash. */
export function showValue(value) {
  if (value === undefined || value === null || value === '') return '—';
  if (Array.isArray(value)) return value.length === 0 ? '[]' : value.map(showValue).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A table in a scrolling wrapper: `columns` are header texts, `rows` arrays of cells. */
export function table(caption, columns, rows, options = {}) {
  return h(
    'div',
    {
      class: options.class === 'narrow' ? 'table-wrap fit' : 'table-wrap',
      tabindex: '0',
      role: 'region',
      'aria-label': caption,
    },
    h(
      'table',
      { class: options.class },
      h('caption', { class: options.showCaption ? undefined : 'visually-hidden' }, caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          columns.map((column) => h('th', { scope: 'col' }, column)),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            row.props ?? null,
            (row.cells ?? row).map((cell) => h('td', null, cell)),
          ),
        ),
      ),
    ),
  );
}

/** A message region: `role=alert` for errors, `status` otherwise. */
export function notice(kind, text) {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A date as local date and time, or an em dash. */
export function showTime(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

/** Labelled form control: `control` gets the id the label points at. */
export function field(labelText, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  const hintElement = hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : undefined;
  if (hintElement) control.setAttribute('aria-describedby', hintElement.id);
  const isCheck = control.type === 'checkbox';
  return h(
    'div',
    { class: isCheck ? 'field check' : 'field' },
    isCheck ? control : undefined,
    h('label', { for: id }, labelText),
    isCheck ? undefined : control,
    hintElement,
  );
}

/** A select of `options` ([value, text] pairs or plain values), with `selected` chosen. */
export function select(id, options, selected) {
  return h(
    'select',
    { id, name: id },
    options.map((option) => {
      const [value, text] = Array.isArray(option) ? option : [option, option];
      return h('option', { value, selected: value === selected }, text);
    }),
  );
}

/** Calls `task` now and then every `ms` until `signal` aborts; errors go to `onError`. */
export function poll(task, ms, signal, onError) {
  let timer;
  const run = async () => {
    if (signal.aborted) return;
    try {
      const again = await task();
      if (again === false) return;
    } catch (error) {
      if (signal.aborted) return;
      onError?.(error);
      // gone, or signed out: asking again would not help
      if (error?.status === 404 || error?.status === 401) return;
    }
    if (!signal.aborted) timer = setTimeout(run, ms);
  };
  signal.addEventListener('abort', () => clearTimeout(timer));
  void run();
}

/** Replaces the children of `parent` (skipping empty ones, which replaceChildren would print). */
export function fill(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** A list of facts, name then value, leaving out those with no value (undefined or ''). */
export function factList(pairs) {
  const shown = pairs.filter(([, value]) => value !== undefined && value !== '');
  return h(
    'dl',
    { class: 'facts' },
    shown.map(([name, value]) => [h('dt', null, name), h('dd', null, value)]),
  );
}
