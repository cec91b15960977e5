/**
 * What a command that writes to a target says before it writes (`porter apply`, `approve`,
 * `undo`): the counts, the first records it deletes or locks, and the target, by name and address,
 * so that an operator with several targets never confirms a write to the wrong one.
 */
import type { RecordResult } from '../model/import.js';
import { DEFAULT_TARGET } from '../targets/targets.js';
import type { PorterContext } from './context.js';

/** The commands that ask before they write. */
export type WriteCommand = 'apply' | 'approve' | 'undo';

/** A target as a question names it: never a secret (the address has its credentials left out). */
export interface TargetShown {
  name: string;
  /** Its address; absent when the process does not know the target (it was removed since). */
  url?: string;
}

export interface WritePreview {
  id: string;
  command: WriteCommand;
  /** The counts as the operator confirms them: "lock 59, update 171" ("nothing" when none). */
  confirm: string;
  /** Records written that delete or lock. */
  removals: number;
  /** The first of them; `row` is their row in the import they come from. */
  firstRemovals: RecordResult[];
  target: TargetShown;
}

/** The target an import writes to, as a question names it. */
export function targetShown(context: PorterContext, name: string | undefined): TargetShown {
  const shown = name ?? DEFAULT_TARGET;
  // the summary's address is shown without the credentials a URL may carry
  const url = context.targets.get(shown)?.summary.url;
  return url === undefined ? { name: shown } : { name: shown, url };
}

/** "target prod (https://dam.example.com)". */
export function targetText(target: TargetShown): string {
  return target.url === undefined
    ? `target ${target.name}`
    : `target ${target.name} (${target.url})`;
}
