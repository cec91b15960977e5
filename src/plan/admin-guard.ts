/**
 * The privilege guard: without allowAdmin an import only ever creates or sets the ordinary
 * user type, never changes a user's type, and never removes a user who is not ordinary.
 * It is an allowlist: the product's full list of types is unknown, and a list of forbidden
 * spellings misses look-alikes ("Admіnistrator" with a Cyrillic і) and other names
 * ("Superuser"), so every type but "General User" counts as privileged.
 */

export interface GuardVerdict {
  allowed: boolean;
  reason?: string;
}

/** The one user type an import may give without allowAdmin (the product's default). */
export const ORDINARY_USER_TYPE = 'General User';

const ALLOWED: GuardVerdict = { allowed: true };

/** A type compared the way a lenient server might: NFKC, trimmed, spaces collapsed, any case. */
export function typeKey(type: string): string {
  return type.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

const ORDINARY_KEY = typeKey(ORDINARY_USER_TYPE);

/** Whether a type is "General User" however it is cased or spaced; anything else may grant privileges. */
export function isOrdinaryType(type: unknown): boolean {
  return typeof type === 'string' && typeKey(type) === ORDINARY_KEY;
}

function describeType(type: unknown): string {
  return typeof type === 'string' ? JSON.stringify(type) : 'unknown type';
}

const HOW = 'start the import with --allow-admin to permit it';

/** Checks one user operation; `current` is the user as it is now (absent for a create). */
export function guardUserChange(
  action: 'create' | 'update' | 'delete',
  upload: Record<string, unknown>,
  current: Record<string, unknown> | undefined,
  allowAdmin: boolean,
): GuardVerdict {
  if (allowAdmin) return ALLOWED;
  const wanted = upload.type;
  if (action === 'create') {
    // no type: the server gives the ordinary default
    if (wanted === undefined || isOrdinaryType(wanted)) return ALLOWED;
    return {
      allowed: false,
      reason: `would create a user of type ${describeType(wanted)}; only "${ORDINARY_USER_TYPE}" is allowed, ${HOW}`,
    };
  }
  const existing = current?.type;
  if (action === 'delete') {
    if (isOrdinaryType(existing)) return ALLOWED;
    return {
      allowed: false,
      reason: `would remove a user of type ${describeType(existing)}; only "${ORDINARY_USER_TYPE}" users may be removed, ${HOW}`,
    };
  }
  // an update may restate the current type exactly; any other type is a change of type
  if (wanted !== undefined && wanted !== existing) {
    return {
      allowed: false,
      reason: `would change the user type from ${describeType(existing ?? 'none')} to ${describeType(wanted)}; ${HOW}`,
    };
  }
  return ALLOWED;
}
