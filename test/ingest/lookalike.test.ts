import { describe, expect, it } from 'vitest';
import { keyTextProblem } from '../../src/ingest/canonical-key.js';
import { lookalikeKey } from '../../src/ingest/lookalike.js';

describe('lookalikeKey', () => {
  it.each([
    ['Alice', 'alice'],
    ['ALICE', 'alice'],
    ['\u0430lice', 'alice'], // Cyrillic а
    ['ａｌｉｃｅ', 'alice'], // full width
    ['DUPCASE', 'dupcase'],
    ['\u0410LICE', 'alice'], // Cyrillic А, capital
    ['\u03BFscar', 'oscar'], // Greek ο
    ['b0b', 'bob'], // digit zero
    ['pau1', 'paul'], // digit one
    ['stra\u00DFe', 'strasse'], // ß folds to ss
    ['\uD835\uDC1A\uD835\uDC25\uD835\uDC22\uD835\uDC1C\uD835\uDC1E', 'alice'], // math bold
    ['jean\u2010luc', 'jean-luc'], // hyphen
  ])('%s meets %s', (left, right) => {
    expect(lookalikeKey(left)).toBe(lookalikeKey(right));
  });

  it.each([
    ['alice', 'alicia'],
    ['alice', 'alicé'],
    ['bob', 'rob'],
    ['group-a', 'group-b'],
  ])('%s and %s stay apart', (left, right) => {
    expect(lookalikeKey(left)).not.toBe(lookalikeKey(right));
  });

  it('is deterministic and leaves a plain lower-case name as it is', () => {
    expect(lookalikeKey('alice')).toBe('alice');
    expect(lookalikeKey('j.doe_2@example.com')).toBe(lookalikeKey('j.doe_2@example.com'));
    expect(lookalikeKey('J.Doe_2@Example.com')).toBe('j.doe_2@example.com');
  });

  it('drops invisible characters, so a key hiding one still meets its plain form', () => {
    expect(lookalikeKey('al\u200Bice')).toBe('alice');
  });
});

describe('what a username or group name may hold', () => {
  it.each([
    [' alice', /whitespace/],
    ['alice ', /whitespace/],
    ['alice\u00A0', /whitespace/],
    ['al\u200Bice', /U\+200B/],
    ['al\u200Eice', /U\+200E/],
    ['al\u202Eice', /U\+202E/],
    ['\uFEFFalice', /U\+FEFF/],
    ['al\u0000ice', /U\+0000/],
    ['al\nice', /U\+000A/],
    ['al\uD800ice', /lone surrogate/],
    ['alice\uDC00', /lone surrogate/],
  ])('refuses %j', (key, reason) => {
    expect(keyTextProblem(key)).toMatch(reason);
  });

  it.each(['alice', 'Jean Dupont', 'zoë', '山田', 'a😀b', 'o\u0027neil'])('accepts %j', (key) => {
    expect(keyTextProblem(key)).toBeUndefined();
  });
});
