/**
 * The bundle, version 1, for its readers (a migration import, a tool of one's own): the shape
 * of the document `--format bundle` writes (see bundle.ts). Records are as the server answered
 * a GET, so they use the interface's own read-answer schemas: every record has its id, and
 * fields the specification does not know are kept.
 */
import { z } from 'zod';
import {
  aclReadAnswerSchema,
  groupReadAnswerSchema,
  userReadAnswerSchema,
} from '../admin/schemas.js';
import { PorterError } from '../errors/porter-error.js';
import { BUNDLE_KIND, BUNDLE_VERSION } from './bundle.js';

/** A bundle document of version 1. Unknown top-level keys are refused: they belong to a later version. */
export const bundleV1Schema = z.strictObject({
  porter: z.literal(BUNDLE_KIND),
  version: z.literal(BUNDLE_VERSION),
  /** When the run began (ISO time, UTC). */
  exportedAt: z.iso.datetime(),
  /** Base URL of the admin server read. */
  source: z.string(),
  porterVersion: z.string(),
  groups: z.array(groupReadAnswerSchema),
  users: z.array(userReadAnswerSchema),
  acls: z.array(aclReadAnswerSchema),
});

export type BundleV1 = z.infer<typeof bundleV1Schema>;

/** Whether a parsed JSON value is a bundle of version 1. */
export function isBundleV1(value: unknown): value is BundleV1 {
  return bundleV1Schema.safeParse(value).success;
}

/** The bundle, or PORTER_INPUT_UNREADABLE saying where it does not fit version 1. */
export function parseBundleV1(value: unknown): BundleV1 {
  const result = bundleV1Schema.safeParse(value);
  if (result.success) return result.data;
  const where = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(document)'}: ${issue.message}`)
    .join('; ');
  throw new PorterError('PORTER_INPUT_UNREADABLE', `not a porter bundle of version 1: ${where}`);
}
