/**
 * `manifest.json`, written last in every completed run: what was exported, from where, by
 * which porter, when, how many records, and the sha256 of each file. A run directory without
 * one is not complete. Retention only ever touches directories that hold one.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResourceName } from '../admin/resources.js';
import { writeFileAtomically } from './atomic-file.js';
import { MANIFEST_FILE } from './export-plan.js';
import type { ExportCounts, ExportFile, ExportFormat, ExportResource } from './export-types.js';
import type { GroupsPicture } from './group-names.js';

export const MANIFEST_KIND = 'porter-export';
export const MANIFEST_VERSION = 1;

/** What is and is not known about the run's picture being consistent. */
export interface ExportConsistency {
  /** Resources in the order they were read; each is one GET answer. */
  readOrder: ResourceName[];
  /** The groups when the run began and when it ended (read again for the check). */
  groupsAtStart?: GroupsPicture;
  groupsAtEnd?: GroupsPicture;
  /** The groups (ids, names) differ between start and end: the picture may be mixed. */
  groupsChanged: boolean;
}

export interface ExportManifest {
  porter: typeof MANIFEST_KIND;
  manifestVersion: typeof MANIFEST_VERSION;
  id: string;
  /** The schedule that made the run, if any. */
  schedule?: string;
  porterVersion: string;
  /** Base URL of the admin server read. */
  source: string;
  resource: ExportResource;
  format: ExportFormat;
  startedAt: string;
  finishedAt: string;
  counts: ExportCounts;
  files: ExportFile[];
  consistency: ExportConsistency;
  warnings: string[];
}

/** Writes the manifest (atomically, like every file of a run). */
export async function writeManifest(dir: string, manifest: ExportManifest): Promise<void> {
  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  await writeFileAtomically(dir, MANIFEST_FILE, [text]);
}

function isManifest(value: unknown): value is ExportManifest {
  if (value === null || typeof value !== 'object') return false;
  const manifest = value as Partial<ExportManifest>;
  return (
    manifest.porter === MANIFEST_KIND &&
    typeof manifest.id === 'string' &&
    Array.isArray(manifest.files) &&
    manifest.files.every((file) => typeof (file as Partial<ExportFile>)?.name === 'string')
  );
}

/** The manifest of a run directory, or undefined when it has none (or not porter's). */
export async function readManifest(dir: string): Promise<ExportManifest | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, MANIFEST_FILE), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return isManifest(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
