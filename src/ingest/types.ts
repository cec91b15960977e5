/** What the ingest pipeline hands on, and what its parsers hand to it. */
import type { InputFormat } from './detect-format.js';
import type { StagedAnchor } from '../anchor/anchor-rows.js';

export type IngestItem =
  | {
      kind: 'record';
      /** 1-based record number in the upload, header excluded. */
      row: number;
      /** CSV: physical line the record starts on (header is line 1). NDJSON: its line. JSON: absent. */
      line?: number;
      /** Columns and values exactly as given, for reports and re-uploads. */
      input: Record<string, unknown>;
      /** About how many bytes of the upload the record took, when the parser knows. */
      bytes?: number;
      /** Coerced fields to send; the input object itself when it holds exactly them. */
      record: Record<string, unknown>;
      warnings: readonly string[];
      /** The mapping's anchor and what it matched on the DAM (src/anchor/anchor-rows.ts). */
      anchor?: StagedAnchor;
    }
  | {
      /** A row the mapping's `when` leaves out. */
      kind: 'skipped';
      row: number;
      line?: number;
      input: Record<string, unknown>;
      bytes?: number;
      /** Why, for the report. */
      reason: string;
    }
  | {
      kind: 'invalid';
      row: number;
      line?: number;
      input: Record<string, unknown>;
      bytes?: number;
      /**
       * PORTER_RECORD_TOO_LARGE for a record over the size limit, which was not read;
       * PORTER_MAPPING_FAILED for a record a mapping expression failed on.
       */
      errorCode: RecordErrorCode;
      /** The record's key (username, group or ACL name) when it was given and valid. */
      key?: string;
      /**
       * Keys of DAM records the row stands for though it failed (the accounts its anchor met in a
       * conflict): a sync never takes them for ones the file leaves out.
       */
      alsoNames?: string[];
      /** The (first) field the error is about. */
      field?: string;
      /** Its value as given. */
      value?: unknown;
      /** Starts with "row N: ". */
      error: string;
    };

export interface IngestHeader {
  format: InputFormat;
  /** CSV: the header cells in order. JSON/NDJSON: the keys of the first record. */
  columns: string[];
  /** Column → field, for the columns whose values are sent (not ignored, not service-supplied). */
  fields: Record<string, string>;
  /** CSV only: the delimiter used, given or detected. */
  delimiter?: string;
}

export type RecordErrorCode =
  | 'PORTER_ROW_INVALID'
  | 'PORTER_RECORD_TOO_LARGE'
  | 'PORTER_MAPPING_FAILED'
  | 'PORTER_ANCHOR_CONFLICT';

/** One record as a parser read it, before mapping and coercion. */
export interface RawRecord {
  row: number;
  line?: number;
  input: Record<string, unknown>;
  /** True when values are CSV text; false for typed JSON values. */
  text: boolean;
  /** Bytes of the upload the record's values take in memory, about; 0 when none are kept. */
  bytes?: number;
  /**
   * A CSV row with exactly the header's cells: the header (shared by every such row), whose
   * names are `input`'s keys in order.
   */
  columns?: readonly string[];
  /** Why the record cannot be used at all (wrong number of cells, not a JSON object, too large). */
  problem?: { message: string; field?: string; value?: unknown; code?: RecordErrorCode };
}

/** A parser opened on an upload: its header (known before the first record) and its records. */
export interface RecordSource {
  format: InputFormat;
  /** CSV header cells; undefined for JSON and NDJSON, which have none. */
  columns?: string[];
  delimiter?: string;
  /** Records in batches (what one chunk of the upload completed), to keep per-record overhead low. */
  records: AsyncGenerator<RawRecord[]>;
}
