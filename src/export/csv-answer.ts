/**
 * The CSV export's reader of a GET answer: lines made straight from the answer's bytes by the
 * transcoder, the records it leaves to the general way checked here as every answer's records
 * are (the same schema, the same fault), to be made portable and written by the export.
 */
import type { AnswerDecoder } from '../admin/answer-decoder.js';
import { checkReadRecords } from '../admin/answers.js';
import { fieldChecksOf } from '../admin/fast-record-check.js';
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { cellOf, csvCell, CSV_LIST_SEPARATOR, holdsSeparator } from './csv-writer.js';
import { CsvTranscoder, type TranscodePlan } from './csv-transcoder.js';
import { PORTABLE_FIELDS, plainGroupReference } from './portable-record.js';

/** CSV bytes, and in their place the records (checked, as answered) the export writes itself. */
export type CsvAnswerPart = Buffer | Record<string, unknown>;

/** What one chunk of the answer gave, and how many records that is. */
export interface CsvAnswerChunk {
  parts: CsvAnswerPart[];
  records: number;
}

/**
 * The transcoder's plan for a resource's CSV; undefined for groups, whose reading also learns
 * their names (the general way does that), or a schema the field checks do not understand.
 * `nameOf`: a group's name when it is known now, never looked up.
 */
export function csvTranscodePlan(
  resource: ResourceName,
  nameOf: (id: number) => string | undefined,
): TranscodePlan | undefined {
  if (resource === 'groups') return undefined;
  const fields = fieldChecksOf(RESOURCES[resource].readAnswerSchema);
  if (fields === undefined) return undefined;
  return {
    fields,
    columns: PORTABLE_FIELDS[resource],
    references: resource === 'users' ? { groups: 'list' } : { groupId: 'single' },
    referenceOf: (id, inList) => plainGroupReference(nameOf(id), CSV_LIST_SEPARATOR, inList),
    cellOf,
    stringCell: csvCell,
    warnsOf: (value) => Array.isArray(value) && holdsSeparator(value),
  };
}

/** The answer's CSV bytes and left-over records, chunk by chunk. */
export function csvAnswerDecoder(
  resource: ResourceName,
  info: { method: string; path: string },
  plan: TranscodePlan,
): AnswerDecoder<CsvAnswerChunk> {
  const transcoder = new CsvTranscoder(plan);
  return {
    get kind() {
      return transcoder.kind;
    },
    write(chunk) {
      const { parts, records } = transcoder.write(chunk);
      const kept: CsvAnswerPart[] = [];
      let read = records;
      const decoded = (fault?: unknown) => ({
        ...(kept.length > 0 ? { value: { parts: kept, records: read } } : {}),
        records: read,
        ...(fault === undefined ? {} : { fault }),
      });
      for (const part of parts) {
        if (Buffer.isBuffer(part)) {
          kept.push(part);
          continue;
        }
        const checked = [part.element];
        const { fault } = checkReadRecords(resource, checked, info);
        // the lines after a wrong record are not written: the answer stops at it
        if (fault !== undefined) return decoded(fault);
        kept.push(checked[0] as Record<string, unknown>);
        read++;
      }
      return decoded();
    },
    end: () => transcoder.end(),
  };
}
