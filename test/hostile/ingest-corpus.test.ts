/**
 * The hostile corpus: every upload listed in test/fixtures/hostile/manifest.json goes through a
 * real import (producer, Redis, workers, sandbox) and must end with the code the manifest
 * expects, for the whole upload or per record, with nothing written to the sandbox. Imports run
 * in update mode against an empty sandbox, so a record read correctly ends NOT_FOUND after a
 * lookup and is never written either. Big fixtures are generated here, never committed.
 *
 * To add a case: put a small file beside the manifest (or a generator below) and list it.
 */
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceName } from '../../src/admin/resources.js';
import { startImport } from '../../src/app/imports.js';
import { isPorterError } from '../../src/errors/porter-error.js';
import type { InputFormat } from '../../src/ingest/index.js';
import type { ImportMode, ImportOptions } from '../../src/model/import.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

interface Fixture {
  file?: string;
  generate?: string;
  why: string;
  resource: ResourceName;
  mode: ImportMode;
  format?: InputFormat;
  options?: Partial<ImportOptions>;
  /** The code the whole upload ends with. */
  upload?: string;
  /** A pattern the upload's error message must match. */
  message?: string;
  /** Per record, in row order: its code, and its key when it must be read exactly. */
  records?: Array<{ code: string; key?: string }>;
}

const DIRECTORY = new URL('../fixtures/hostile/', import.meta.url);
const MIB = 1024 * 1024;
const manifest = JSON.parse(await readFile(new URL('manifest.json', DIRECTORY), 'utf8')) as {
  fixtures: Fixture[];
};

const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
const big = `{"username":"big","dept":"${'x'.repeat(2 * MIB)}"}`;
const GENERATED: Readonly<Record<string, () => string>> = {
  'blank-lines-1mib.csv': () => `username,dept\n${'\n'.repeat(MIB)}`,
  'deep-nesting.json': () => `[{"username":"alice","substitutionMap":${deep}}]`,
  'deep-nesting.ndjson': () => `{"username":"alice","substitutionMap":${deep}}\n`,
  'huge-record.ndjson': () => `{"username":"alice"}\n${big}\n{"username":"bob"}\n`,
  'huge-record.json': () => `[{"username":"alice"},${big},{"username":"bob"}]`,
  'huge-record.csv': () => `username,dept\nalice,A\nbig,"${'x'.repeat(2 * MIB)}"\nbob,B\n`,
  'many-columns.csv': () =>
    `username,${Array.from({ length: 10_000 }, (_, index) => `extra${index}`).join(',')}\nalice\n`,
};

async function bytesOf(fixture: Fixture): Promise<Buffer> {
  if (fixture.file !== undefined) return readFile(new URL(fixture.file, DIRECTORY));
  const generate = GENERATED[fixture.generate ?? ''];
  if (generate === undefined) throw new Error(`no generator for ${fixture.generate}`);
  return Buffer.from(generate());
}

function writes(pipeline: Pipeline): number {
  let total = 0;
  for (const methods of Object.values(pipeline.sandbox.store.stats.writes)) {
    total += methods.PUT + methods.POST + methods.DELETE;
  }
  return total;
}

describe('the hostile corpus', () => {
  let pipeline: Pipeline;
  beforeAll(async () => {
    pipeline = await startPipeline();
  });
  afterAll(async () => {
    await pipeline.close();
  });

  it('lists at least 25 uploads, each with an expectation', () => {
    expect(manifest.fixtures.length).toBeGreaterThanOrEqual(25);
    for (const fixture of manifest.fixtures) {
      expect((fixture.upload === undefined) !== (fixture.records === undefined)).toBe(true);
    }
  });

  it.each(manifest.fixtures.map((fixture) => [fixture.file ?? fixture.generate, fixture] as const))(
    '%s',
    async (name, fixture) => {
      const bytes = await bytesOf(fixture);
      const writesBefore = writes(pipeline);
      let importId: string | undefined;
      const submitted = startImport(
        pipeline.context,
        {
          options: {
            resource: fixture.resource,
            mode: fixture.mode,
            batchSize: 100,
            listSeparator: '|',
            emptyAsClear: false,
            allowAdmin: false,
            ...fixture.options,
          },
          source: Readable.from([bytes]),
          fileName: name,
          format: fixture.format,
        },
        (created) => (importId = created.id),
      );
      if (fixture.upload !== undefined) {
        const error: unknown = await submitted.then(
          () => undefined,
          (refusal: unknown) => refusal,
        );
        expect(isPorterError(error) ? error.code : error, fixture.why).toBe(fixture.upload);
        if (fixture.message !== undefined && isPorterError(error)) {
          expect(error.message).toMatch(new RegExp(fixture.message));
          expect(error.message.length).toBeLessThan(2000);
        }
        expect((await pipeline.context.store.get(importId ?? ''))?.state).toBe('failed');
      } else {
        const info = await pipeline.waitFinal((await submitted).id);
        const results = (await pipeline.results(info.id)).sort((a, b) => a.row - b.row);
        const seen = results.map((result, index) => {
          const expected = fixture.records?.[index];
          const code = result.errorCode ?? result.status;
          return expected?.key === undefined ? { code } : { code, key: result.key };
        });
        expect(seen, fixture.why).toEqual(fixture.records);
        for (const result of results) expect(result.error?.length ?? 0).toBeLessThan(2000);
      }
      expect(writes(pipeline), 'nothing is written to the admin server').toBe(writesBefore);
    },
  );
});
