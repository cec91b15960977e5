import { describe, expect, it } from 'vitest';
import { coerceJson, coerceText } from '../../src/ingest/coerce.js';
import { ingestItems, ingestRecords } from './ingest-fixture.js';

describe('coercion of CSV text', () => {
  it.each([
    ['true', true],
    ['TRUE', true],
    ['Yes', true],
    ['1', true],
    [' false ', false],
    ['no', false],
    ['NO', false],
    ['0', false],
  ])('reads boolean %j as %j', (text, expected) => {
    expect(coerceText('boolean', text, '|')).toEqual({ kind: 'value', value: expected });
  });

  it('refuses other boolean spellings', () => {
    expect(coerceText('boolean', 'maybe', '|')).toEqual({
      kind: 'invalid',
      reason: '"maybe" is not a boolean (use true/false, yes/no or 1/0)',
    });
    expect(coerceText('boolean', 'y', '|').kind).toBe('invalid');
  });

  it.each([
    ['42', 42],
    [' 7 ', 7],
    ['-3', -3],
    ['007', 7],
  ])('reads integer %j as %j', (text, expected) => {
    expect(coerceText('integer', text, '|')).toEqual({ kind: 'value', value: expected });
  });

  it.each(['1.5', '1e3', '12abc', 'high', '0x10', '99999999999999999999'])(
    'refuses %j as an integer',
    (text) => {
      expect(coerceText('integer', text, '|')).toEqual({
        kind: 'invalid',
        reason: `${JSON.stringify(text)} is not an integer`,
      });
    },
  );

  it('splits lists on the separator, trimming items and dropping empty ones', () => {
    expect(coerceText('stringList', ' fileUpload | rss||  ', '|')).toEqual({
      kind: 'value',
      value: ['fileUpload', 'rss'],
    });
    expect(coerceText('integerList', '1|2| 3', '|')).toEqual({ kind: 'value', value: [1, 2, 3] });
    expect(coerceText('integerList', '1|two', '|')).toEqual({
      kind: 'invalid',
      reason: 'list item "two" is not an integer',
    });
  });

  it('uses another list separator when told', async () => {
    const records = await ingestRecords('name,groupId,forms\nRead only,3,Basic; Extended\n', {
      resource: 'acls',
      mode: 'update',
      listSeparator: ';',
    });
    expect(records[0].record.forms).toEqual(['Basic', 'Extended']);
  });

  it('reads objects as JSON text', () => {
    expect(coerceText('object', '{"lang":"en"}', '|')).toEqual({
      kind: 'value',
      value: { lang: 'en' },
    });
    expect(coerceText('object', '[1]', '|')).toEqual({
      kind: 'invalid',
      reason: '"[1]" is not a JSON object',
    });
    expect(coerceText('object', '{lang', '|').kind).toBe('invalid');
  });

  it('keeps strings as they are', () => {
    expect(coerceText('string', ' 0042 ', '|')).toEqual({ kind: 'value', value: ' 0042 ' });
  });

  it('makes the row invalid with field, value and reason', async () => {
    const items = await ingestItems('name,priority,hidden\nSales,high,maybe\n', {
      resource: 'groups',
    });
    expect(items[0]).toMatchObject({
      kind: 'invalid',
      row: 1,
      line: 2,
      field: 'priority',
      value: 'high',
      error:
        'row 1: field "priority": "high" is not an integer; field "hidden": "maybe" is not a boolean (use true/false, yes/no or 1/0)',
    });
  });
});

describe('coercion of JSON values', () => {
  it('accepts correctly typed values', () => {
    expect(coerceJson('boolean', false, '|')).toEqual({ kind: 'value', value: false });
    expect(coerceJson('integer', 12, '|')).toEqual({ kind: 'value', value: 12 });
    expect(coerceJson('stringList', ['a', 'b'], '|')).toEqual({ kind: 'value', value: ['a', 'b'] });
    expect(coerceJson('object', { a: 1 }, '|')).toEqual({ kind: 'value', value: { a: 1 } });
    expect(coerceJson('string', '', '|')).toEqual({ kind: 'value', value: '' });
  });

  it('accepts text for numbers, booleans and lists, spelled as in CSV', () => {
    expect(coerceJson('integer', '12', '|')).toEqual({ kind: 'value', value: 12 });
    expect(coerceJson('boolean', 'yes', '|')).toEqual({ kind: 'value', value: true });
    expect(coerceJson('boolean', 0, '|')).toEqual({ kind: 'value', value: false });
    expect(coerceJson('stringList', 'a|b', '|')).toEqual({ kind: 'value', value: ['a', 'b'] });
    expect(coerceJson('integerList', ['1', 2], '|')).toEqual({ kind: 'value', value: [1, 2] });
  });

  it('refuses wrongly typed values', () => {
    expect(coerceJson('integer', 1.5, '|')).toEqual({
      kind: 'invalid',
      reason: '1.5 is not an integer',
    });
    expect(coerceJson('string', 12345, '|')).toEqual({
      kind: 'invalid',
      reason: '12345 is not a string',
    });
    expect(coerceJson('boolean', 2, '|').kind).toBe('invalid');
    expect(coerceJson('stringList', { a: 1 }, '|').kind).toBe('invalid');
    expect(coerceJson('stringList', ['a', 1], '|')).toEqual({
      kind: 'invalid',
      reason: 'list item 1 is not a string',
    });
    expect(coerceJson('object', [], '|').kind).toBe('invalid');
  });

  it('coerces a JSON upload the same way', async () => {
    const records = await ingestRecords(
      '[{"name":"Sales","priority":"3","hidden":"no","users":[4,"alice"]}]',
      {
        resource: 'groups',
      },
    );
    expect(records[0].record).toEqual({
      name: 'Sales',
      priority: 3,
      hidden: false,
      users: [4, 'alice'],
    });
  });
});
