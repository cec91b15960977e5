/**
 * The events of work other than an import's end: an export that finished or failed, a circuit
 * breaker that paused or resumed an import, a scheduled run that failed, a plan approved or
 * dropped. Each is a plain function of what the work knows; the callers emit them.
 */
import type { ExportInfo } from '../export/export-types.js';
import type { ImportInfo } from '../model/import.js';
import type { ScheduleRun } from '../imports/schedule-history.js';
import { DEFAULT_TARGET } from '../targets/targets.js';
import type { NotifyEventInput } from './notify-event.js';

/** An export's end: finished (records per resource) or failed (why). */
export function exportNotice(info: ExportInfo): NotifyEventInput | undefined {
  const target = info.request.target ?? DEFAULT_TARGET;
  const base = {
    target,
    ids: { exportId: info.id, ...(info.schedule ? { schedule: info.schedule.name } : {}) },
    counts: { written: info.written, ...info.counts } as Record<string, number>,
    ...(info.schedule ? { startedBy: `schedule:${info.schedule.name}` } : {}),
    key: `${info.id}.${info.state}`,
    page: 'exports',
  };
  if (info.state === 'completed') {
    return {
      ...base,
      name: 'export.finished',
      title: `Export ${info.id} of ${info.request.resource} from ${target} finished: ${info.written} records`,
      why: info.warnings.slice(0, 5),
    };
  }
  if (info.state === 'failed') {
    return {
      ...base,
      name: 'export.failed',
      title: `Export ${info.id} of ${info.request.resource} from ${target} failed`,
      why: info.reason ? [info.reason] : [],
      action: 'Its files were not written; the next run of its schedule tries again.',
    };
  }
  return undefined;
}

function importBase(info: ImportInfo) {
  return {
    target: info.options.target ?? DEFAULT_TARGET,
    ids: { importId: info.id },
    ...(info.startedBy ? { startedBy: info.startedBy } : {}),
    ...(info.onBehalfOf ? { onBehalfOf: info.onBehalfOf } : {}),
    page: `imports/${encodeURIComponent(info.id)}`,
  };
}

/** A circuit breaker paused an import (the server fails), or it runs again. */
export function breakerNotice(
  kind: 'paused' | 'resumed',
  info: ImportInfo,
  reason?: string,
): NotifyEventInput {
  const base = importBase(info);
  return {
    ...base,
    name: kind === 'paused' ? 'breaker.paused' : 'breaker.resumed',
    counts: { ...info.counts, total: Math.max(info.total, 0) },
    why: reason ? [reason] : [],
    title:
      kind === 'paused'
        ? `Import ${info.id} on ${base.target} is paused: the admin server fails`
        : `Import ${info.id} on ${base.target} runs again`,
    ...(kind === 'paused'
      ? { action: `It probes the server again by itself; porter resume ${info.id} resumes it now.` }
      : {}),
  };
}

/** A scheduled import's run that started no import: its file could not be read, or its import. */
export function scheduleFailedNotice(
  schedule: string,
  run: ScheduleRun,
  target: string | undefined,
  addedBy: string | undefined,
): NotifyEventInput {
  return {
    name: 'schedule.failed',
    target: target ?? DEFAULT_TARGET,
    ids: { schedule, ...(run.jobId ? { jobId: run.jobId } : {}) },
    counts: {},
    why: run.note ? [run.note] : [],
    title: `Scheduled import ${schedule} failed: no import was started`,
    startedBy: `schedule:${schedule}`,
    ...(addedBy ? { onBehalfOf: addedBy } : {}),
    action: `The next run tries again; porter schedule show ${schedule} lists its runs.`,
    ...(run.jobId ? { key: `${schedule}.${run.jobId}` } : {}),
  };
}

/** A held sync's plan was approved (and is being written) or dropped (cancelled). */
export function planNotice(
  kind: 'approved' | 'dropped',
  plan: ImportInfo,
  by: string,
  application?: ImportInfo,
): NotifyEventInput {
  const base = importBase(plan);
  return {
    ...base,
    name: kind === 'approved' ? 'plan.approved' : 'plan.dropped',
    ids: { importId: plan.id, ...(application ? { applicationId: application.id } : {}) },
    counts: { ...plan.actions } as Record<string, number>,
    why: [],
    title:
      kind === 'approved'
        ? `Plan of ${plan.id} on ${base.target} approved by ${by}${application ? `; ${application.id} writes it` : ''}`
        : `Plan of ${plan.id} on ${base.target} dropped by ${by}: nothing of it is written`,
    key: `${plan.id}.${kind}`,
  };
}

/** An API token that expires within the warning window: whoever uses it must get a new one. */
export function tokenExpiringNotice(
  token: { id: string; name: string; role: string; expiresAt: string; createdBy: string },
  now: Date,
): NotifyEventInput {
  const hours = Math.max(0, Math.round((Date.parse(token.expiresAt) - now.getTime()) / 3_600_000));
  const left = hours >= 48 ? `${Math.round(hours / 24)} days` : `${hours} hours`;
  return {
    name: 'token.expiring',
    ids: { tokenId: token.id, token: token.name },
    counts: { hoursLeft: hours },
    why: [`token ${token.name} (${token.role}) expires at ${token.expiresAt}`],
    title: `API token ${token.name} expires in ${left}`,
    startedBy: token.createdBy,
    action: `An admin makes a new one (porter tokens create --name ${token.name}-2 --role ${token.role}) and the work that uses it switches over before then.`,
    key: `${token.id}.${token.expiresAt}`,
  };
}

/** A scheduled run that starts this much after its time missed it (no worker ran then). */
export const MISSED_AFTER_MS = 15 * 60_000;

/** The time a scheduler's job was due, from its id `repeat:<scheduler>:<millis>`. */
export function scheduledDueAt(jobId: string | undefined): number | undefined {
  const match = /^repeat:.+:(\d+)$/.exec(jobId ?? '');
  return match ? Number(match[1]) : undefined;
}

/**
 * A scheduled run that missed its time (no worker was running then) and runs late, now: the
 * people who wait for the 02:30 sync learn it ran at 09:10. Undefined when it ran in time.
 */
export function scheduleMissedNotice(
  schedule: string,
  jobId: string | undefined,
  target: string | undefined,
  now: Date,
): NotifyEventInput | undefined {
  const due = scheduledDueAt(jobId);
  if (due === undefined || now.getTime() - due < MISSED_AFTER_MS) return undefined;
  const late = Math.round((now.getTime() - due) / 60_000);
  const dueAt = new Date(due).toISOString();
  return {
    name: 'schedule.missed',
    target: target ?? DEFAULT_TARGET,
    ids: { schedule, jobId: jobId! },
    counts: { minutesLate: late },
    why: [`its run due at ${dueAt} starts only now, ${late} minutes late: no worker was running`],
    title: `Scheduled import ${schedule} missed its time (${dueAt}); it runs now`,
    startedBy: `schedule:${schedule}`,
    action: 'Check that a porter worker runs at all times the schedule fires.',
    key: `${schedule}.${due}`,
  };
}
