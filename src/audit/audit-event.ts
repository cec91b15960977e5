/** One entry of the audit trail. docs/security.md describes the format. */
import type { Principal } from '../auth/principal.js';

export type AuditPhase = 'intent' | 'result' | 'done';

/** What an action came to (src/audit/outcome.ts says how each is decided). */
export type AuditOutcome = 'ok' | 'partial' | 'held' | 'failed' | 'refused';

export interface AuditEvent {
  /** The stream entry's id (milliseconds-sequence), set when stored. */
  id?: string;
  /** When, ISO 8601. */
  at: string;
  /** What kind of action: `import.start`, `import.approve`, `token.create`, `signin.failed`… */
  action: string;
  /**
   * `intent` is written before an action that cannot be written in the same Redis step as its
   * event, `result` after it with the same `actionId`; `done` is an action and its event written
   * in one step (or a refusal, which changes nothing).
   */
  phase: AuditPhase;
  actionId: string;
  /**
   * `onBehalfOf`: who added the schedule or started the watch that acts; `display`: a name shown
   * beside `name` (an OpenID Connect user's email).
   */
  who: { name: string; role?: string; via?: string; onBehalfOf?: string; display?: string };
  from?: { address?: string; userAgent?: string };
  /** Ids, target, mode; of a result, what the work came to: its state and counts. */
  what: Record<string, unknown>;
  result?: {
    /** Done as asked, all of it. */
    ok: boolean;
    /** ok, partial, held, failed, or refused (turned down before anything happened). */
    outcome?: AuditOutcome;
    /** The HTTP status of the answer. */
    status?: number;
    /** The exit code of the command. */
    exitCode?: number;
    /** The error code, when it failed or was refused. */
    code?: string;
    message?: string;
  };
}

/** The `who` of an event from a principal, or `anonymous`. */
export function whoOf(principal: Principal | undefined): AuditEvent['who'] {
  if (!principal) return { name: 'anonymous' };
  return {
    name: principal.name,
    role: principal.role,
    via: principal.via,
    ...(principal.onBehalfOf ? { onBehalfOf: principal.onBehalfOf } : {}),
    ...(principal.display ? { display: principal.display } : {}),
  };
}
