/**
 * The privilege guard: an import never creates an administrator, changes a user's type,
 * or removes an administrator unless it was started with allowAdmin.
 */
import { ADMIN_USER_TYPES } from '../admin/schemas.js';

export interface GuardVerdict {
  allowed: boolean;
  reason?: string;
}

const ALLOWED: GuardVerdict = { allowed: true };

const ADMIN_TYPE_KEYS = new Set(ADMIN_USER_TYPES.map(typeKey));

/** A type compared the way a lenient server might: Unicode-normalized, trimmed, spaces folded, any case. */
function typeKey(type: string): string {
  return type.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/**
 * Whether a user type grants administration: a known administrator type however it is
 * spelled, or any type that names "admin" (the product's full list of types is unknown).
 */
export function isAdminType(type: string): boolean {
  const key = typeKey(type);
  return ADMIN_TYPE_KEYS.has(key) || key.includes('admin');
}

/** Checks one user operation; `current` is the user as it is now (absent for a create). */
export function guardUserChange(
  action: 'create' | 'update' | 'delete',
  upload: Record<string, unknown>,
  current: Record<string, unknown> | undefined,
  allowAdmin: boolean,
): GuardVerdict {
  if (allowAdmin) return ALLOWED;
  const wanted = typeof upload.type === 'string' ? upload.type : undefined;
  if (action === 'create') {
    if (wanted !== undefined && isAdminType(wanted)) {
      return {
        allowed: false,
        reason: `would create a "${wanted}"; start the import with --allow-admin to permit it`,
      };
    }
    return ALLOWED;
  }
  const existing = typeof current?.type === 'string' ? current.type : undefined;
  if (action === 'delete') {
    if (existing !== undefined && isAdminType(existing)) {
      return {
        allowed: false,
        reason: `would remove a "${existing}"; start the import with --allow-admin to permit it`,
      };
    }
    return ALLOWED;
  }
  if (wanted !== undefined && wanted !== existing) {
    return {
      allowed: false,
      reason: `would change the user type from "${existing ?? 'none'}" to "${wanted}"; start the import with --allow-admin to permit it`,
    };
  }
  return ALLOWED;
}
