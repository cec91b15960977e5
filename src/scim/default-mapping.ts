/**
 * How a SCIM User becomes DAM user fields: a porter mapping (docs/mapping.md), its `fields`
 * expressions read over the SCIM resource in canonical form. PORTER_SCIM_MAPPING_FILE replaces
 * it. The externalId is not mapped: it is the record's anchor (anchor-placement.ts).
 */
import { loadMapping, type Mapping } from '../ingest/mapping.js';

const ENTERPRISE = '`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`';

/** The default, as a mapping file would hold it. */
export const DEFAULT_SCIM_USER_MAPPING = {
  description: 'SCIM User → DAM user (porter default)',
  fields: {
    username: 'userName',
    firstName: 'name.givenName',
    middleName: 'name.middleName',
    lastName: 'name.familyName',
    email: "$contains($primaryValue(emails, 'work'), '@') ? $primaryValue(emails, 'work')",
    phone: "$primaryValue(phoneNumbers, 'work')",
    position: 'title',
    dept: `${ENTERPRISE}.department`,
    company: `${ENTERPRISE}.organization`,
    status: "active = false ? 'Locked' : 'Active'",
  },
} as const;

export function defaultScimUserMapping(): Mapping {
  return loadMapping(structuredClone(DEFAULT_SCIM_USER_MAPPING), 'users');
}
