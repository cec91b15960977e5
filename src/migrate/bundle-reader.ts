/**
 * Reads a bundle (src/export/bundle.ts) as it arrives: the head fields, and each section's
 * records in parts, so a bundle of a million users never sits whole in memory. Only the
 * document's top level is scanned here; each section's array goes to the JSON array splitter
 * the admin client reads GET answers with, and every record is checked against the read-answer
 * schema of its resource, as a GET answer would be.
 */
import { checkReadRecords } from '../admin/answers.js';
import { JsonArraySplitter } from '../admin/json-array-splitter.js';
import type { ResourceName } from '../admin/resources.js';
import { BUNDLE_KIND, BUNDLE_VERSION } from '../export/bundle.js';
import { PorterError } from '../errors/porter-error.js';

export interface BundleHeadFields {
  porter?: unknown;
  version?: unknown;
  exportedAt?: unknown;
  source?: unknown;
  porterVersion?: unknown;
}

export type BundlePart =
  | { kind: 'records'; resource: ResourceName; records: Record<string, unknown>[] }
  /** After the last byte: the head fields, checked. */
  | { kind: 'end'; head: { exportedAt: string; source: string; porterVersion: string } };

const SECTIONS: ReadonlySet<string> = new Set(['groups', 'users', 'acls']);
const HEAD_FIELDS: ReadonlySet<string> = new Set([
  'porter',
  'version',
  'exportedAt',
  'source',
  'porterVersion',
]);
/** A head value longer than this is not a bundle's. */
const MAX_SCALAR_BYTES = 64 * 1024;

type TopState = 'open' | 'key-or-close' | 'key' | 'colon' | 'value' | 'scalar' | 'after' | 'end';

function unreadable(message: string): PorterError {
  return new PorterError('PORTER_INPUT_UNREADABLE', `not a porter bundle of version 1: ${message}`);
}

function isBlank(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** The bundle's parts, in the order they come; throws PORTER_INPUT_UNREADABLE where it is wrong. */
export async function* readBundle(
  source: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<BundlePart> {
  const head: BundleHeadFields = {};
  const seen = new Set<string>();
  let state: TopState = 'open';
  let text: number[] = [];
  let inString = false;
  let escaped = false;
  let key = '';
  let splitter: JsonArraySplitter | undefined;
  let section: ResourceName | undefined;
  let offset = 0;

  const where = (index: number): string => `byte ${offset + index}`;

  function* records(values: unknown[]): Generator<BundlePart> {
    if (values.length === 0 || section === undefined) return;
    const { checked, fault } = checkReadRecords(section, values, {
      method: 'bundle',
      path: section,
    });
    if (fault !== undefined) {
      const message = fault instanceof Error ? fault.message : String(fault);
      throw unreadable(`a record of "${section}" does not fit its schema (${message})`);
    }
    yield {
      kind: 'records',
      resource: section,
      records: values.slice(0, checked) as Record<string, unknown>[],
    };
  }

  for await (const piece of source) {
    let chunk: Buffer =
      typeof piece === 'string'
        ? Buffer.from(piece)
        : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    while (chunk.length > 0) {
      if (splitter) {
        let values: unknown[];
        try {
          values = splitter.write(chunk);
        } catch (error) {
          throw unreadable(`section "${section}": ${(error as Error).message}`);
        }
        if (splitter.kind === 'other') throw unreadable(`"${section}" is not an array`);
        yield* records(values);
        if (!splitter.closed) {
          offset += chunk.length;
          break;
        }
        const rest = splitter.trailing ?? Buffer.alloc(0);
        offset += chunk.length - rest.length;
        chunk = rest;
        splitter = undefined;
        section = undefined;
        state = 'after';
        continue;
      }
      let index = 0;
      for (; index < chunk.length && !splitter; index++) {
        const byte = chunk[index]!;
        if (state === 'key' || (state === 'scalar' && inString)) {
          if (text.length >= MAX_SCALAR_BYTES)
            throw unreadable(`a value too long at ${where(index)}`);
          text.push(byte);
          if (escaped) escaped = false;
          else if (byte === 0x5c) escaped = true;
          else if (byte === 0x22) {
            inString = false;
            if (state === 'key') {
              key = JSON.parse(Buffer.from(text).toString('utf8')) as string;
              text = [];
              if (seen.has(key)) throw unreadable(`"${key}" is given twice`);
              if (!SECTIONS.has(key) && !HEAD_FIELDS.has(key)) {
                throw unreadable(`unknown field "${key}" (it belongs to a later version)`);
              }
              seen.add(key);
              state = 'colon';
            } else {
              endScalar();
            }
          }
          continue;
        }
        if (state === 'scalar') {
          if (byte === 0x2c || byte === 0x7d || isBlank(byte)) {
            endScalar();
            index--; // the byte ends the value and is read again as what follows it
            continue;
          }
          if (text.length >= MAX_SCALAR_BYTES)
            throw unreadable(`a value too long at ${where(index)}`);
          text.push(byte);
          continue;
        }
        if (isBlank(byte)) continue;
        switch (state) {
          case 'open':
            if (byte !== 0x7b) throw unreadable('the document is not a JSON object');
            state = 'key-or-close';
            break;
          case 'key-or-close':
            if (byte === 0x7d && seen.size === 0) {
              state = 'end';
              break;
            }
            if (byte !== 0x22) throw unreadable(`a field name expected at ${where(index)}`);
            text = [byte];
            state = 'key';
            break;
          case 'colon':
            if (byte !== 0x3a) throw unreadable(`":" expected at ${where(index)}`);
            state = 'value';
            break;
          case 'value':
            if (SECTIONS.has(key)) {
              if (byte !== 0x5b) throw unreadable(`"${key}" is not an array`);
              section = key as ResourceName;
              splitter = new JsonArraySplitter({ stopAtClose: true });
              index--; // the splitter reads the `[` itself
              break;
            }
            if (byte === 0x7b || byte === 0x5b)
              throw unreadable(`"${key}" is not a text or number`);
            text = [byte];
            inString = byte === 0x22;
            escaped = false;
            state = 'scalar';
            break;
          case 'after':
            if (byte === 0x2c) state = 'key-or-close';
            else if (byte === 0x7d) state = 'end';
            else throw unreadable(`"," or "}" expected at ${where(index)}`);
            break;
          case 'end':
            throw unreadable(`something after the document's end at ${where(index)}`);
        }
      }
      offset += index;
      chunk = chunk.subarray(index);
    }
  }
  if (splitter || state !== 'end') throw unreadable('the document ends before it is complete');
  for (const name of SECTIONS) if (!seen.has(name)) throw unreadable(`"${name}" is missing`);
  if (head.porter !== BUNDLE_KIND) throw unreadable(`"porter" is not "${BUNDLE_KIND}"`);
  if (head.version !== BUNDLE_VERSION) throw unreadable(`"version" is not ${BUNDLE_VERSION}`);
  const textOf = (name: keyof BundleHeadFields): string => {
    const value = head[name];
    if (typeof value !== 'string') throw unreadable(`"${name}" is missing or not a text`);
    return value;
  };
  yield {
    kind: 'end',
    head: {
      exportedAt: textOf('exportedAt'),
      source: textOf('source'),
      porterVersion: textOf('porterVersion'),
    },
  };

  function endScalar(): void {
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(text).toString('utf8'));
    } catch {
      throw unreadable(`the value of "${key}" is not JSON`);
    }
    text = [];
    // a document of another kind or version is refused before its sections are read
    if (key === 'porter' && value !== BUNDLE_KIND)
      throw unreadable(`"porter" is not "${BUNDLE_KIND}"`);
    if (key === 'version' && value !== BUNDLE_VERSION) {
      throw unreadable(`"version" is ${JSON.stringify(value)}, not ${BUNDLE_VERSION}`);
    }
    (head as Record<string, unknown>)[key] = value;
    state = 'after';
  }
}
