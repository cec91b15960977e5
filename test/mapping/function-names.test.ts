/** A call of a function that does not exist is refused when the mapping is read, not per row. */
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { PorterError } from '../../src/errors/porter-error.js';
import { loadMapping } from '../../src/ingest/index.js';
import { JSONATA_FUNCTIONS } from '../../src/mapping/function-names.js';

function refusal(fields: Record<string, string>): PorterError {
  try {
    loadMapping({ fields }, 'users');
  } catch (error) {
    if (error instanceof PorterError) return error;
    throw error;
  }
  throw new Error('expected the mapping to be refused');
}

describe('function names', () => {
  it.each([
    [
      '$uppercas(`Given Name`)',
      'there is no function $uppercas (did you mean $uppercase?) at position 9',
    ],
    ["$LowerCase('A')", 'there is no function $LowerCase (did you mean $lowercase?)'],
    ["$tabel('t', x)", 'there is no function $tabel (did you mean $table?)'],
    [
      "$normaliseDiacritics('é')",
      'there is no function $normaliseDiacritics (did you mean $normalizeDiacritics?)',
    ],
    ['$frobnicate(x)', 'there is no function $frobnicate at position'],
    ['$trim($substrin(x, 1))', 'there is no function $substrin (did you mean $substring?)'],
  ])('refuses %s with the name and the nearest one', (source, message) => {
    const error = refusal({ firstName: source });
    expect(error.code).toBe('PORTER_MAPPING_INVALID');
    expect(error.message).toContain(`fields.firstName: ${message}`);
    expect(error.message).toContain(JSON.stringify(source));
  });

  it("accepts JSONata's and porter's functions, and functions the expression binds", () => {
    expect(() =>
      loadMapping(
        {
          fields: {
            firstName: '($f := function($x) { $uppercase($x) }; $f(`Given Name`))',
            lastName: '$map([a], function($v, $i) { $string($i) })[0]',
            email: '$lowercase($formatDate($parseDate(d, "MM/DD/YYYY"), "YYYY") & "@x")',
          },
        },
        'users',
      ),
    ).not.toThrow();
  });

  it.each(JSONATA_FUNCTIONS)('$%s is a function of the jsonata package', async (name) => {
    const type: unknown = await jsonata(`$type($${name})`).evaluate({});
    expect(type).toBe('function');
  });
});
