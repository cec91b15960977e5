/**
 * One export run: reads every record of the requested resources, streaming (the records of
 * each part of an answer are written as soon as that part is parsed), into files that appear
 * whole or not at all, then writes
 * the manifest. Groups are read first, so users and ACLs can name their groups; they are read
 * again at the end to tell whether they changed meanwhile. A failing read is retried with the
 * import's policy, restarting the file it was writing; a run that still fails leaves nothing.
 */
import { mkdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { AdminClient } from '../admin/client.js';
import { classifyFailure } from '../admin/errors.js';
import type { ResourceName } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { withReadRetry, type RetryPolicy } from '../execute/retry-policy.js';
import { PORTER_VERSION } from '../version.js';
import { removeStaleTempFiles, writeFileAtomically } from './atomic-file.js';
import { bundleSource } from './bundle.js';
import { csvAnswerDecoder, csvTranscodePlan, type CsvAnswerPart } from './csv-answer.js';
import type { TranscodePlan } from './csv-transcoder.js';
import { csvSource, csvTranscodedSource, CSV_LIST_SEPARATOR } from './csv-writer.js';
import {
  MANIFEST_FILE,
  planFiles,
  READ_ORDER,
  resourcesOf,
  type PlannedFile,
} from './export-plan.js';
import type { ExportCounts, ExportFile, ExportRequest } from './export-types.js';
import { GroupNames, type GroupsPicture } from './group-names.js';
import { groupNamesDecoder } from './group-names-decoder.js';
import { jsonArraySource, ndjsonSource } from './json-writer.js';
import { writeManifest, MANIFEST_KIND, MANIFEST_VERSION, type ExportManifest } from './manifest.js';
import { toPortable, type PortableOptions } from './portable-record.js';
import { RunWarnings } from './warnings.js';

export interface ExportRunInput {
  id: string;
  request: ExportRequest;
  /** Directory of this run's files; made when missing. */
  dir: string;
  /** Name of the schedule that started the run. */
  schedule?: string;
}

export interface ExportProgress {
  /** Records written so far, all files together. */
  written: number;
  counts: Readonly<ExportCounts>;
}

export interface ExportRunDeps {
  client: Pick<AdminClient, 'streamBatches' | 'streamDecoded' | 'get' | 'baseUrl'>;
  /** Retries of failing reads; the same policy as imports. */
  retry: RetryPolicy;
  signal?: AbortSignal;
  /** Called after every batch of records written; `counts` is live, copy it to keep it. */
  onProgress?: (progress: ExportProgress) => void;
  /** Called before each retry's wait (awaited): a 429 can make every worker back off. */
  onRetry?: (error: unknown, delayMs: number, file: string) => Promise<void> | void;
  now?: () => Date;
}

/** Runs the export; resolves with the manifest written, or throws PORTER_EXPORT_FAILED. */
export async function runExport(
  input: ExportRunInput,
  deps: ExportRunDeps,
): Promise<ExportManifest> {
  return new ExportRun(input, deps).run();
}

class ExportRun {
  private readonly counts: ExportCounts = {};
  private readonly warnings = new RunWarnings();
  private groups = new GroupNames();
  /** Groups met in users or ACLs after the groups were read: id → name (undefined: gone). */
  private readonly lateGroups = new Map<number, string | undefined>();
  private readonly planned: PlannedFile[];
  private readonly now: () => Date;

  constructor(
    private readonly input: ExportRunInput,
    private readonly deps: ExportRunDeps,
  ) {
    this.planned = planFiles(input.request);
    this.now = deps.now ?? (() => new Date());
  }

  /** Writes every planned file, then the manifest; all or nothing. */
  async run(): Promise<ExportManifest> {
    const { dir } = this.input;
    const startedAt = this.now().toISOString();
    try {
      await mkdir(dir, { recursive: true });
      await this.removeOwnFiles();
      const exported = new Set(this.planned.map((file) => file.content));
      if (!exported.has('groups') && !exported.has('bundle')) {
        await this.retrying('groups', () => this.readGroupNames());
      }
      const files: ExportFile[] = [];
      let groupsAtStart: GroupsPicture | undefined;
      for (const file of this.planned) {
        files.push(await this.retrying(file.name, () => this.writeFile(file, startedAt)));
        groupsAtStart ??= this.groups.picture();
      }
      groupsAtStart ??= this.groups.picture();
      const groupsAtEnd = await this.retrying('groups', () => this.readGroupNames());
      const groupsChanged = groupsAtStart.sha256 !== groupsAtEnd.sha256;
      if (groupsChanged) {
        this.warnings.add(
          `groups changed while the export ran (${groupsAtStart.count} at the start, ` +
            `${groupsAtEnd.count} at the end): users and ACLs may name groups the files do not hold`,
        );
      }
      const manifest: ExportManifest = {
        porter: MANIFEST_KIND,
        manifestVersion: MANIFEST_VERSION,
        id: this.input.id,
        ...(this.input.schedule === undefined ? {} : { schedule: this.input.schedule }),
        porterVersion: PORTER_VERSION,
        source: this.deps.client.baseUrl,
        resource: this.input.request.resource,
        format: this.input.request.format,
        startedAt,
        finishedAt: this.now().toISOString(),
        counts: { ...this.counts },
        files,
        consistency: {
          readOrder: READ_ORDER.filter((name) => this.counts[name] !== undefined),
          groupsAtStart,
          groupsAtEnd,
          groupsChanged,
        },
        warnings: this.warnings.list(),
      };
      await writeManifest(dir, manifest);
      return manifest;
    } catch (error) {
      await this.removeOwnFiles().catch(() => {});
      await rmdir(dir).catch(() => {}); // only when empty: never removes what others put there
      throw exportFailed(this.input.id, error);
    }
  }

  /** Runs one step with the read retry policy; each attempt starts the step over. */
  private retrying<T>(step: string, attempt: () => Promise<T>): Promise<T> {
    return withReadRetry(attempt, this.deps.retry, {
      signal: this.deps.signal,
      onRetry: (error, delayMs) => this.deps.onRetry?.(error, delayMs, step),
    });
  }

  /** Removes the files of this run's plan and its manifest (a run is all or nothing). */
  private async removeOwnFiles(): Promise<void> {
    await removeFilesOf(this.input.dir, this.planned);
  }

  private async writeFile(file: PlannedFile, startedAt: string): Promise<ExportFile> {
    const resources = file.content === 'bundle' ? READ_ORDER : resourcesOf(file.content);
    for (const resource of resources) this.counts[resource] = 0;
    if (resources.includes('groups')) this.groups = new GroupNames();
    this.reportProgress();
    const written = await writeFileAtomically(
      this.input.dir,
      file.name,
      this.partsOf(file, startedAt),
      this.deps.signal,
    );
    const records = resources.reduce((sum, resource) => sum + (this.counts[resource] ?? 0), 0);
    return { ...written, content: file.content, format: file.format, records };
  }

  /** The text of a file, in parts, made as its records are read. */
  private partsOf(file: PlannedFile, startedAt: string): AsyncGenerator<string | Buffer> {
    if (file.content === 'bundle') {
      const head = {
        exportedAt: startedAt,
        source: this.deps.client.baseUrl,
        porterVersion: PORTER_VERSION,
      };
      const sections = READ_ORDER.map(
        (resource) => [resource, () => this.records(resource, false)] as const,
      );
      return bundleSource(head, sections);
    }
    const resource = file.content;
    const warn = (message: string): void => this.warnings.add(message);
    if (file.format === 'csv') {
      const plan = csvTranscodePlan(resource, (id) => this.knownGroupName(id));
      if (plan !== undefined) {
        return csvTranscodedSource(resource, this.transcoded(resource, plan), warn);
      }
      return csvSource(resource, this.records(resource, true, true), warn);
    }
    const records = this.records(resource, true);
    return file.format === 'json' ? jsonArraySource(records) : ndjsonSource(records);
  }

  /** Every record of a resource in the batches it is parsed in, counted, portable or as answered. */
  private async *records(
    resource: ResourceName,
    portable: boolean,
    csv = false,
  ): AsyncGenerator<Record<string, unknown>[]> {
    const options = this.portableOptions(csv);
    this.counts[resource] = 0;
    for await (const batch of this.deps.client.streamBatches(resource, {}, this.deps.signal)) {
      if (resource === 'groups') for (const group of batch) this.groups.add(group);
      yield portable ? await portableBatch(resource, batch, options) : batch;
      this.counts[resource] = (this.counts[resource] ?? 0) + batch.length;
      this.reportProgress();
    }
  }

  /**
   * The CSV of a resource as the transcoder reads it from the answer, chunk by chunk, counted;
   * the records it leaves to the general way made portable in their place.
   */
  private async *transcoded(
    resource: ResourceName,
    plan: TranscodePlan,
  ): AsyncGenerator<CsvAnswerPart[]> {
    // the records the transcoder leaves are few: they are made portable one by one
    const options = this.portableOptions(true);
    this.counts[resource] = 0;
    const chunks = this.deps.client.streamDecoded(resource, {}, this.deps.signal, (info) =>
      csvAnswerDecoder(resource, info, plan),
    );
    for await (const { parts, records } of chunks) {
      for (let index = 0; index < parts.length; index++) {
        const part = parts[index]!;
        if (Buffer.isBuffer(part)) continue;
        const portable = toPortable(resource, part, options);
        parts[index] = portable instanceof Promise ? await portable : portable;
      }
      yield parts;
      this.counts[resource] = (this.counts[resource] ?? 0) + records;
      this.reportProgress();
    }
  }

  /** A group's name when it is known now (read, or looked up before); never looked up. */
  private knownGroupName(id: number): string | undefined {
    return this.groups.nameOf(id) ?? this.lateGroups.get(id);
  }

  private portableOptions(csv: boolean): PortableOptions {
    return {
      groupName: (id: number) => this.groupName(id),
      listSeparator: csv ? CSV_LIST_SEPARATOR : undefined,
      warn: (message: string) => this.warnings.add(message),
    };
  }

  /** Reads all groups for their names only; returns their picture. */
  private async readGroupNames(): Promise<GroupsPicture> {
    const names = new GroupNames();
    const batches = this.deps.client.streamDecoded(
      'groups',
      {},
      this.deps.signal,
      groupNamesDecoder,
    );
    for await (const batch of batches) {
      for (const group of batch) names.add(group);
    }
    if (this.groups.size === 0) this.groups = names;
    return names.picture();
  }

  /** A group's name; a group created after the groups were read is looked up by id, once. */
  private groupName(id: number): string | undefined | Promise<string | undefined> {
    const known = this.groups.nameOf(id);
    if (known !== undefined || this.lateGroups.has(id)) return known ?? this.lateGroups.get(id);
    return this.lookUpGroup(id);
  }

  private async lookUpGroup(id: number): Promise<string | undefined> {
    const [group] = await this.retrying('groups', () =>
      this.deps.client.get('groups', { id }, this.deps.signal),
    );
    const name = typeof group?.name === 'string' ? group.name : undefined;
    this.lateGroups.set(id, name);
    return name;
  }

  private reportProgress(): void {
    if (!this.deps.onProgress) return;
    const { groups = 0, users = 0, acls = 0 } = this.counts;
    // the live counts, not a copy: called once per batch, thousands of times
    this.deps.onProgress({ written: groups + users + acls, counts: this.counts });
  }
}

/**
 * The records of a batch as the per-resource files carry them. One at a time: a group looked
 * up for one record (created after the groups were read) is known to the next.
 */
async function portableBatch(
  resource: ResourceName,
  batch: readonly Record<string, unknown>[],
  options: PortableOptions,
): Promise<Record<string, unknown>[]> {
  const portable: Record<string, unknown>[] = new Array(batch.length);
  for (let index = 0; index < batch.length; index++) {
    const converted = toPortable(resource, batch[index]!, options);
    portable[index] = converted instanceof Promise ? await converted : converted;
  }
  return portable;
}

/** Removes a run's temporary files, the files of its plan and its manifest. */
async function removeFilesOf(dir: string, planned: readonly PlannedFile[]): Promise<void> {
  await removeStaleTempFiles(dir);
  for (const name of [...planned.map((file) => file.name), MANIFEST_FILE]) {
    await unlink(join(dir, name)).catch(() => {});
  }
}

/**
 * Removes what an attempt of a run left in `dir` (temporary files, files of its plan, its
 * manifest), then the directory if that left it empty: for a run that failed without its
 * worker cleaning up (a worker that died). Files porter did not write stay.
 */
export async function removeRunFiles(dir: string, request: ExportRequest): Promise<void> {
  await removeFilesOf(dir, planFiles(request));
  await rmdir(dir).catch(() => {});
}

/** The run's failure as PORTER_EXPORT_FAILED; the message is the reason. */
function exportFailed(id: string, error: unknown): PorterError {
  if (error instanceof PorterError && error.code === 'PORTER_EXPORT_FAILED') return error;
  const reason = error instanceof Error ? error.message : String(error);
  const kind = classifyFailure(error);
  return new PorterError('PORTER_EXPORT_FAILED', reason, {
    cause: error,
    details: { exportId: id, kind },
  });
}
