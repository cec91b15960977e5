/**
 * The bundle: users, groups and ACLs in one JSON document, for a later migration import.
 *
 *   { "porter": "bundle", "version": 1, "exportedAt": ISO time, "source": base URL,
 *     "porterVersion": "x.y.z", "groups": [...], "users": [...], "acls": [...] }
 *
 * Records are as the server answered them, ids included (lossless): a group's `users`, a
 * user's `groups` and an ACL's `groupId` are ids that resolve within the same document.
 * Sections are streamed in this order, each read when the previous one is written.
 */
import type { ResourceName } from '../admin/resources.js';
import type { RecordBatches } from './export-types.js';
import { jsonArrayParts } from './json-writer.js';
import { batchText } from './text-chunks.js';

export const BUNDLE_KIND = 'bundle';
export const BUNDLE_VERSION = 1;

export interface BundleHead {
  exportedAt: string;
  source: string;
  porterVersion: string;
}

/** A section: the resource and a function that starts reading its records. */
export type BundleSection = readonly [ResourceName, () => RecordBatches];

async function* bundleParts(
  head: BundleHead,
  sections: readonly BundleSection[],
): AsyncGenerator<string> {
  yield `{\n"porter": ${JSON.stringify(BUNDLE_KIND)},\n"version": ${BUNDLE_VERSION},\n`;
  yield `"exportedAt": ${JSON.stringify(head.exportedAt)},\n`;
  yield `"source": ${JSON.stringify(head.source)},\n`;
  yield `"porterVersion": ${JSON.stringify(head.porterVersion)}`;
  for (const [resource, read] of sections) {
    yield `,\n${JSON.stringify(resource)}: `;
    yield* jsonArrayParts(read());
  }
  yield '\n}\n';
}

/** The bundle document, in parts of about 64 KiB. */
export function bundleSource(
  head: BundleHead,
  sections: readonly BundleSection[],
): AsyncGenerator<string> {
  return batchText(bundleParts(head, sections));
}
