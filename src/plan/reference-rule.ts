/**
 * How a reference to a group or user (a user's `groups`, a group's `users`, an ACL's `groupId`)
 * is read, as pure functions any lookup can use:
 *
 * - `#4` is always the id 4;
 * - `name:x` is always the name `x` (`name:#4` is the group named "#4", `name:2` the one named "2");
 * - a bare number (`4`, CSV digits or a JSON number) may be a name or an id: the record with that
 *   name when there is one, else the id. When it is the name of one record and the id of
 *   another, it is ambiguous and refused;
 * - anything else is a name.
 *
 * An id no name claims is passed on unchecked, as before: the admin server refuses an unknown id.
 */

export type ReferenceKind = 'group' | 'user';

/** A record a lookup found: its id and its name (group name or username). */
export interface FoundRecord {
  id: number;
  name: string;
}

export type ReferenceDecision =
  | { kind: 'resolved'; id: number }
  | { kind: 'unresolved'; message: string }
  | { kind: 'ambiguous'; message: string };

/** What a lookup has to find to decide a reference: the record with this name, with this id. */
export interface ReferenceLookups {
  name?: string;
  id?: number;
}

const EXPLICIT_ID = /^#(\d+)$/;
const DIGITS = /^\d+$/;
export const NAME_PREFIX = 'name:';

function safeId(digits: string): number | undefined {
  const id = Number(digits);
  return Number.isSafeInteger(id) ? id : undefined;
}

/**
 * The lookups a reference needs. A bare number needs the id lookup only when a record has that
 * name (otherwise it is the id, unchecked); a per-record lookup may skip it until then.
 */
export function referenceLookups(reference: string | number): ReferenceLookups {
  if (typeof reference === 'number') return { name: String(reference), id: reference };
  const explicit = EXPLICIT_ID.exec(reference);
  if (explicit) {
    const id = safeId(explicit[1]!);
    return id === undefined ? {} : { id };
  }
  if (reference.startsWith(NAME_PREFIX)) return { name: reference.slice(NAME_PREFIX.length) };
  if (DIGITS.test(reference)) {
    const id = safeId(reference);
    return id === undefined ? { name: reference } : { name: reference, id };
  }
  return { name: reference };
}

/**
 * Decides one reference from what was found by its name and by its id (undefined: none found,
 * or not looked up).
 */
export function decideReference(
  kind: ReferenceKind,
  reference: string | number,
  byName: FoundRecord | undefined,
  byId: FoundRecord | undefined,
): ReferenceDecision {
  const wanted = referenceLookups(reference);
  const text = JSON.stringify(String(reference));
  if (wanted.name === undefined && wanted.id === undefined) {
    return { kind: 'unresolved', message: `${text} is not a valid ${kind} id` };
  }
  if (wanted.name === undefined) return { kind: 'resolved', id: wanted.id! };
  if (wanted.id === undefined) {
    return byName
      ? { kind: 'resolved', id: byName.id }
      : {
          kind: 'unresolved',
          message: `${kind} ${JSON.stringify(wanted.name)} does not exist${separatorHint(wanted.name)}`,
        };
  }
  // a bare number: a name when a record has it, else an id
  if (!byName) return { kind: 'resolved', id: wanted.id };
  if (byId && byId.id !== byName.id) {
    return {
      kind: 'ambiguous',
      message:
        `${text} is ambiguous: ${kind} ${JSON.stringify(byName.name)} has id ${byName.id}, and ` +
        `${kind} id ${byId.id} is ${JSON.stringify(byId.name)}; write #${byName.id} or #${byId.id}`,
    };
  }
  return { kind: 'resolved', id: byName.id };
}

/** Characters that separate list items in the files people keep. */
const LIKELY_SEPARATORS = [',', ';', '|', '\t'];

/**
 * When a name that was not found holds a likely list separator, the list was probably split by
 * another one: say how to set it.
 */
function separatorHint(name: string): string {
  const found = LIKELY_SEPARATORS.find((separator) => name.includes(separator));
  if (found === undefined) return '';
  const shown = found === '\t' ? 'tab' : found;
  return (
    `; if "${shown}" separates a list here, set the list separator to "${shown}" ` +
    `(--list-separator, or "listSeparator" in the mapping file)`
  );
}

/** How to write a name so it reads back as that name (for files porter writes). */
export function nameReference(name: string): string {
  const misread = EXPLICIT_ID.test(name) || DIGITS.test(name) || name.startsWith(NAME_PREFIX);
  return misread ? `${NAME_PREFIX}${name}` : name;
}
