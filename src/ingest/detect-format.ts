/** Which parser an upload needs: told, from its name or content type, or from its first byte. */
import { extname } from 'node:path';

export type InputFormat = 'csv' | 'json' | 'ndjson';
export const INPUT_FORMATS: readonly InputFormat[] = ['csv', 'json', 'ndjson'];

const BY_EXTENSION: Readonly<Record<string, InputFormat>> = {
  '.csv': 'csv',
  '.tsv': 'csv',
  '.txt': 'csv',
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
};

const BY_CONTENT_TYPE: Readonly<Record<string, InputFormat>> = {
  'text/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'application/csv': 'csv',
  'application/vnd.ms-excel': 'csv',
  'application/json': 'json',
  'text/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'application/x-jsonlines': 'ndjson',
  'application/jsonlines': 'ndjson',
};

/** The format named by a file name's extension, if it names one. */
export function formatFromFileName(fileName: string | undefined): InputFormat | undefined {
  if (fileName === undefined) return undefined;
  return BY_EXTENSION[extname(fileName).toLowerCase()];
}

/** The format named by a MIME type (parameters such as charset ignored), if it names one. */
export function formatFromContentType(contentType: string | undefined): InputFormat | undefined {
  if (contentType === undefined) return undefined;
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  return BY_CONTENT_TYPE[mediaType];
}

/** Whitespace JSON allows between tokens; CSV sniffing skips the same bytes. */
export function isJsonWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** Index of the first byte that is not whitespace, or -1. */
export function firstContentIndex(bytes: Uint8Array): number {
  for (let index = 0; index < bytes.length; index++) {
    if (!isJsonWhitespace(bytes[index])) return index;
  }
  return -1;
}

/** The format from the content: '[' starts JSON, '{' NDJSON, anything else CSV. */
export function sniffFormat(head: Uint8Array): InputFormat {
  const index = firstContentIndex(head);
  if (index === -1) return 'csv';
  if (head[index] === 0x5b) return 'json';
  if (head[index] === 0x7b) return 'ndjson';
  return 'csv';
}

/** The format to parse with: an explicit one wins, then file name, then content type, then sniffing. */
export function detectFormat(
  hints: { format?: InputFormat; fileName?: string; contentType?: string },
  head: Uint8Array,
): InputFormat {
  return (
    hints.format ??
    formatFromFileName(hints.fileName) ??
    formatFromContentType(hints.contentType) ??
    sniffFormat(head)
  );
}
