import { describe, expect, it } from 'vitest';
import { canonicalResource } from '../../src/scim/canonical.js';
import { equalityOn, matches, parseFilter } from '../../src/scim/filter.js';
import type { JsonObject } from '../../src/scim/attribute-path.js';

const user = canonicalResource('User', {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  id: '17',
  externalId: 'Ab-9',
  UserName: 'Jose.Mueller@Example.com',
  displayName: 'José Müller',
  active: 'True',
  name: { familyName: 'Employee', givenName: 'Jose' },
  emails: [
    { Primary: true, type: 'work', value: 'jose@example.com' },
    { type: 'home', value: 'jm@example.org' },
  ],
  meta: { created: '2026-01-02T10:00:00Z' },
  'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { Department: 'Sales' },
});

function test(filter: string, resource: JsonObject = user): boolean {
  return matches(parseFilter(filter, 'User'), resource);
}

describe('SCIM filters', () => {
  it('eq on userName ignores case; on externalId it does not', () => {
    expect(test('userName eq "jose.mueller@example.com"')).toBe(true);
    expect(test('USERNAME EQ "JOSE.MUELLER@EXAMPLE.COM"')).toBe(true);
    expect(test('externalId eq "Ab-9"')).toBe(true);
    expect(test('externalId eq "ab-9"')).toBe(false);
    expect(test('userName eq "someone.else"')).toBe(false);
  });

  it('emails.value, displayName, sub-attributes and extension attributes in any case', () => {
    expect(test('emails.value eq "JM@example.org"')).toBe(true);
    expect(test('Emails.Value co "example.org"')).toBe(true);
    expect(test('DisplayName eq "José Müller"')).toBe(true);
    expect(test('name.FamilyName eq Employee')).toBe(true);
    expect(
      test('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "sales"'),
    ).toBe(true);
  });

  it('sw, co, ew, pr, gt on dates, booleans given as text', () => {
    expect(test('userName sw "jose"')).toBe(true);
    expect(test('userName sw "mueller"')).toBe(false);
    expect(test('userName ew ".COM"')).toBe(true);
    expect(test('title pr')).toBe(false);
    expect(test('emails pr')).toBe(true);
    expect(test('meta.Created gt 2015-10-10T14:38:21.8617979-07:00')).toBe(true);
    expect(test('meta.created lt "2025-01-01T00:00:00Z"')).toBe(false);
    expect(test('active eq true')).toBe(true);
    expect(test('active eq "False"')).toBe(false);
  });

  it('and binds tighter than or; parentheses, not, and value paths', () => {
    expect(
      test(
        'name.FamilyName eq Employee and (emails.Value co example.com or emails.Value co example.net)',
      ),
    ).toBe(true);
    expect(test('userName eq "x" or userName sw "j" and active eq false')).toBe(false);
    expect(test('userName eq "x" or userName sw "j" and active eq true')).toBe(true);
    expect(test('not (userName eq "x")')).toBe(true);
    expect(test('emails[type eq "work" and value co "@example.com"]')).toBe(true);
    expect(test('emails[type eq "home" and value co "@example.com"]')).toBe(false);
  });

  it('a broken filter is invalidFilter, naming where', () => {
    for (const bad of [
      'userName',
      'userName zz "x"',
      'userName eq',
      '(userName eq "x"',
      'userName eq "x',
      '',
    ]) {
      expect(() => parseFilter(bad, 'User'), bad).toThrow(
        expect.objectContaining({
          code: 'PORTER_SCIM_INVALID',
          details: { scimType: 'invalidFilter' },
        }),
      );
    }
  });

  it('finds the equality a read can ask the DAM for', () => {
    expect(equalityOn(parseFilter('userName eq "ann"', 'User'), 'userName')).toBe('ann');
    expect(
      equalityOn(parseFilter('externalId eq "e1" and active eq true', 'User'), 'externalId'),
    ).toBe('e1');
    expect(
      equalityOn(parseFilter('userName eq "a" or userName eq "b"', 'User'), 'userName'),
    ).toBeUndefined();
  });

  it('holds at most 32 comparisons: each is evaluated over every resource of the target', () => {
    const terms = (count: number): string =>
      Array.from({ length: count }, (_, index) => `emails.value co "x${index}"`).join(' or ');
    expect(() => parseFilter(terms(32), 'User')).not.toThrow();
    expect(() => parseFilter(terms(33), 'User')).toThrow(/more than 32 comparisons/);
    expect(() =>
      parseFilter(
        `emails[${terms(20)}] and (${terms(13)})`.replace(/emails\.value/g, 'value'),
        'User',
      ),
    ).toThrow(/more than 32 comparisons/);
  });
});
