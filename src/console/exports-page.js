/** Exports: run one, download its files; scheduled exports: add and remove. */
import { api, download, segment } from './api.js';
import { field, fill, h, notice, poll, select, showTime, table } from './dom.js';
import { errorNotice, loadTargets, targetPicker, targetText } from './target-view.js';

export async function exportsPage(root, { signal, meta }) {
  const runStatus = h('div');
  const listArea = h('div');
  const scheduleStatus = h('div');
  const scheduleArea = h('div');
  const targets = await loadTargets(signal);

  const resource = select('export-resource', meta.exportResources, 'users');
  const format = select('export-format', meta.exportFormats, 'csv');
  const target = targetPicker('export-target', targets, { writes: false });
  const runForm = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: async (event) => {
        event.preventDefault();
        fill(runStatus);
        try {
          const info = await api('/v1/exports', {
            method: 'POST',
            json: {
              ...(target.control.value ? { target: target.control.value } : {}),
              resource: resource.value,
              format: format.value,
            },
            signal,
          });
          runStatus.append(notice('info', `Export ${info.id} queued.`));
          await refreshExports();
        } catch (error) {
          if (!signal.aborted) runStatus.append(errorNotice(error));
        }
      },
    },
    target.element,
    field('Resource', resource),
    field('Format', format),
    h('button', { type: 'submit' }, 'Run export'),
  );

  const name = h('input', {
    type: 'text',
    id: 'schedule-name',
    required: true,
    pattern: '[A-Za-z0-9._-]+',
  });
  const cron = h('input', {
    type: 'text',
    id: 'schedule-cron',
    required: true,
    placeholder: '0 2 * * *',
  });
  const tz = h('input', { type: 'text', id: 'schedule-tz', placeholder: 'UTC' });
  const scheduleResource = select('schedule-resource', meta.exportResources, 'users');
  const scheduleFormat = select('schedule-format', meta.exportFormats, 'csv');
  const scheduleTarget = targetPicker('schedule-target', targets, { writes: false });
  const keep = h('input', { type: 'number', id: 'schedule-keep', min: '1', placeholder: 'all' });
  const scheduleForm = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: async (event) => {
        event.preventDefault();
        fill(scheduleStatus);
        const body = {
          ...(scheduleTarget.control.value ? { target: scheduleTarget.control.value } : {}),
          name: name.value.trim(),
          cron: cron.value.trim(),
          resource: scheduleResource.value,
          format: scheduleFormat.value,
        };
        if (tz.value.trim()) body.tz = tz.value.trim();
        if (keep.value) body.keep = Number(keep.value);
        try {
          await api('/v1/schedules', { method: 'POST', json: body, signal });
          scheduleStatus.append(notice('info', `Schedule ${body.name} saved.`));
          name.value = '';
          await refreshSchedules();
        } catch (error) {
          if (!signal.aborted) scheduleStatus.append(errorNotice(error));
        }
      },
    },
    scheduleTarget.element,
    field('Name', name),
    field('Cron', cron, '5 fields, or 6 with seconds first'),
    field('Time zone', tz),
    field('Resource', scheduleResource),
    field('Format', scheduleFormat),
    field('Runs kept', keep),
    h('button', { type: 'submit' }, 'Add schedule'),
  );

  root.append(
    h('h1', null, 'Exports'),
    h(
      'section',
      { 'aria-labelledby': 'run-title' },
      h('h2', { id: 'run-title' }, 'Run an export'),
      runForm,
      runStatus,
      listArea,
    ),
    h(
      'section',
      { 'aria-labelledby': 'schedules-title' },
      h('h2', { id: 'schedules-title' }, 'Schedules'),
      scheduleForm,
      scheduleStatus,
      scheduleArea,
    ),
  );

  let lastExports = '';
  async function refreshExports() {
    const exports = await api('/v1/exports', { signal });
    const text = JSON.stringify(exports);
    if (text !== lastExports) {
      lastExports = text;
      fill(listArea, renderExports(exports));
    }
    return exports;
  }

  async function refreshSchedules() {
    const schedules = await api('/v1/schedules', { signal });
    fill(
      scheduleArea,
      schedules.length === 0
        ? h('p', { class: 'muted' }, 'No schedules.')
        : table(
            'Schedules',
            ['Name', 'Cron', 'Time zone', 'Target', 'Export', 'Next run', ''],
            schedules.map((schedule) => [
              schedule.name,
              h('code', null, schedule.cron),
              schedule.tz ?? 'UTC',
              targetCell(schedule.request),
              `${schedule.request?.resource ?? '—'} · ${schedule.request?.format ?? '—'}`,
              showTime(schedule.next),
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  'aria-label': `Remove schedule ${schedule.name}`,
                  onclick: async () => {
                    fill(scheduleStatus);
                    try {
                      await api(`/v1/schedules/${segment(schedule.name)}`, {
                        method: 'DELETE',
                        signal,
                      });
                      scheduleStatus.append(notice('info', `Schedule ${schedule.name} removed.`));
                      await refreshSchedules();
                    } catch (error) {
                      if (!signal.aborted) scheduleStatus.append(notice('error', error.message));
                    }
                  },
                },
                'Remove',
              ),
            ]),
          ),
    );
  }

  poll(
    async () => {
      await refreshExports();
    },
    2000,
    signal,
    (error) => fill(runStatus, notice('error', error.message)),
  );
  await refreshSchedules().catch((error) => scheduleStatus.append(notice('error', error.message)));
}

function renderExports(exports) {
  if (exports.length === 0) return h('p', { class: 'muted' }, 'No exports yet.');
  return table(
    'Exports, newest first',
    ['Export', 'Target', 'What', 'State', 'Records', 'Files', 'Created'],
    exports.map((info) => [
      info.id,
      targetCell(info.request),
      `${info.request?.resource ?? '—'} · ${info.request?.format ?? '—'}${info.schedule ? ` (schedule ${info.schedule.name})` : ''}`,
      h('span', { class: `badge state-${info.state}` }, info.state),
      String(info.written ?? 0),
      info.removedAt
        ? h('span', { class: 'muted' }, 'removed by retention')
        : info.state === 'completed'
          ? h(
              'div',
              { class: 'files' },
              (info.files ?? []).map((file) =>
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'secondary small',
                    onclick: (event) =>
                      download(info.links[file.name], `${info.id}-${file.name}`).catch((error) =>
                        event.target.after(notice('error', error.message)),
                      ),
                  },
                  `${file.name}`,
                ),
              ),
            )
          : (info.reason ?? '—'),
      showTime(info.createdAt),
    ]),
  );
}

/** An export's target: its name, and the URL it pointed at (exports have no page of their own). */
function targetCell(request) {
  return h(
    'div',
    { class: 'target' },
    targetText(request?.target),
    request?.targetUrl ? h('div', { class: 'muted' }, request.targetUrl) : undefined,
  );
}
