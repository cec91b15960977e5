/**
 * `$unique`: the first candidate name that is free in the target's directory and not taken by
 * an earlier record of the same upload, as Entra's SelectUniqueValue. Names are compared the way
 * an upload's keys are (case folding, NFKC, look-alike letters), so a name `$unique` gives never
 * looks like another record's.
 *
 * Evaluated in the producer, in upload order, against one read of the directory made when the
 * upload starts: two imports running at once can pick the same free name (the second then fails
 * ALREADY_EXISTS on create, and is retried with the next free name).
 */
import { lookalikeKey } from '../ingest/lookalike.js';
import { MappingFunctionError } from './function-error.js';

/** Candidates a refusal names; the rest are counted, so its message stays short. */
const LISTED_CANDIDATES = 5;

/**
 * Who holds a name: a record on the server (its text fields, and its anchor when it has one), or
 * an earlier row of the upload.
 */
type Holder = { server: Record<string, unknown>; anchor?: string } | { row: number };

export class UniqueNames {
  private readonly taken = new Map<string, Holder>();
  /** Whether the directory was read (else only the upload's own names count). */
  directoryRead = false;
  /** The anchor of the row being evaluated, when the mapping has one (see evaluator.ts). */
  rowAnchor: string | undefined;

  /** A record on the server, by its key; `anchor` is the one it holds. */
  addExisting(key: string, record: Record<string, unknown>, anchor?: string): void {
    // the text fields are all `match` compares: lists and objects are not kept
    const kept: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(record)) {
      if (typeof value === 'string') kept[field] = value;
    }
    this.taken.set(
      lookalikeKey(key),
      anchor === undefined ? { server: kept } : { server: kept, anchor },
    );
  }

  /** A name a record of the upload took (its key, or a `$unique` answer). */
  claim(key: string, row: number): void {
    const folded = lookalikeKey(key);
    const holder = this.taken.get(folded);
    if (holder === undefined || 'server' in holder) this.taken.set(folded, { row });
  }

  /**
   * The first free candidate, claimed for `row`. With `match` ({field: value}), a candidate held
   * on the server by a record whose fields equal those values is that person's own, and is free
   * for them: a re-run of the same feed keeps everyone's name.
   */
  pick(candidates: unknown, row: number, match?: unknown): string {
    const list = (Array.isArray(candidates) ? candidates : [candidates]).filter(
      (candidate): candidate is string => typeof candidate === 'string' && candidate !== '',
    );
    if (list.length === 0) throw new MappingFunctionError('$unique was given no candidate');
    const anchor = this.rowAnchor;
    if (anchor !== undefined) {
      // a person keeps the name they hold, however their other fields changed since
      for (const candidate of list) {
        const holder = this.taken.get(lookalikeKey(candidate));
        if (holder !== undefined && 'server' in holder && holder.anchor === anchor) {
          this.claim(candidate, row);
          return candidate;
        }
      }
    }
    for (const candidate of list) {
      const holder = this.taken.get(lookalikeKey(candidate));
      // a name an anchored person holds is theirs alone
      const own =
        holder !== undefined &&
        'server' in holder &&
        holder.anchor === undefined &&
        matches(holder.server, match);
      if (holder === undefined || own) {
        this.claim(candidate, row);
        return candidate;
      }
      if ('row' in holder && holder.row === row) return candidate;
    }
    const shown = list.slice(0, LISTED_CANDIDATES).map(shorten);
    const more = list.length - shown.length;
    throw new MappingFunctionError(
      `$unique: every candidate is taken (${shown.join(', ')}` +
        `${more > 0 ? `, and ${more} more` : ''}); add more candidates`,
    );
  }
}

function shorten(candidate: string): string {
  return candidate.length > 40 ? `${candidate.slice(0, 39)}…` : candidate;
}

function matches(record: Record<string, unknown>, match: unknown): boolean {
  if (typeof match !== 'object' || match === null || Array.isArray(match)) return false;
  const entries = Object.entries(match as Record<string, unknown>);
  if (entries.length === 0) return false;
  return entries.every(([field, value]) => {
    const held = record[field];
    if (typeof value !== 'string' || typeof held !== 'string') return false;
    return value.trim() !== '' && value.trim().toLowerCase() === held.trim().toLowerCase();
  });
}
