import { describe, expect, it } from 'vitest';
import { PorterError } from '../../src/errors/porter-error.js';
import { canonicalResource } from '../../src/scim/canonical.js';
import { resourceTypes, schemas, serviceProviderConfig } from '../../src/scim/discovery.js';
import { checkIfMatch, versionOf } from '../../src/scim/etag.js';
import { listResponse, readPaging } from '../../src/scim/list-response.js';
import { project } from '../../src/scim/projection.js';
import { scimErrorBody, scimInvalid } from '../../src/scim/scim-error.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

describe('SCIM resources', () => {
  it('canonical form: names in any case, "True", single values made lists, unknown left out', () => {
    const user = canonicalResource(
      'User',
      {
        USERNAME: 'ann',
        Active: 'True',
        emails: { Value: 'ann@x.org', Primary: 'true' },
        adreses: [{ country: 'Germany' }],
        id: '4',
        groups: [{ value: '1' }],
        [ENTERPRISE.toUpperCase()]: { Department: 'Sales', Manager: { Value: 'SuzzyQ' } },
      },
      { writable: true },
    );
    expect(user).toEqual({
      userName: 'ann',
      active: true,
      emails: [{ value: 'ann@x.org', primary: true }],
      [ENTERPRISE]: { department: 'Sales', manager: { value: 'SuzzyQ' } },
    });
    expect(() => canonicalResource('User', ['x'])).toThrow(
      expect.objectContaining({ details: { scimType: 'invalidSyntax' } }),
    );
  });

  it('attributes and excludedAttributes; id and schemas always, a password never', () => {
    const group = { schemas: ['g'], id: '3', displayName: 'Sales', members: [{ value: '1' }] };
    expect(project('Group', group, { excludedAttributes: 'members' })).toEqual({
      schemas: ['g'],
      id: '3',
      displayName: 'Sales',
    });
    const user = {
      schemas: ['u'],
      id: '1',
      userName: 'ann',
      password: 'secret',
      name: { givenName: 'Ann', familyName: 'Lee' },
      emails: [{ type: 'work', value: 'ann@x.org' }],
      [ENTERPRISE]: { department: 'Sales', employeeNumber: '7' },
    };
    expect(
      project('User', user, { attributes: 'UserName,name.givenName,emails[type eq "work"]' }),
    ).toEqual({
      schemas: ['u'],
      id: '1',
      userName: 'ann',
      name: { givenName: 'Ann' },
      emails: [{ type: 'work', value: 'ann@x.org' }],
    });
    expect(project('User', user, { attributes: `${ENTERPRISE}:department` })).toEqual({
      schemas: ['u'],
      id: '1',
      [ENTERPRISE]: { department: 'Sales' },
    });
    expect(project('User', user, {})).not.toHaveProperty('password');
  });

  it('paging: 1-based startIndex, count capped, totalResults counts every match', () => {
    const all = Array.from({ length: 5 }, (_, index) => ({ id: String(index + 1) }));
    const page = listResponse(all, readPaging('2', '2'));
    expect(page).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(page.Resources.map((r) => r.id)).toEqual(['2', '3']);
    expect(listResponse(all, readPaging('0', '-1'))).toMatchObject({
      startIndex: 1,
      itemsPerPage: 0,
      totalResults: 5,
    });
    expect(listResponse([], readPaging())).toMatchObject({ totalResults: 0, Resources: [] });
    expect(() => readPaging('x')).toThrow(
      expect.objectContaining({ details: { scimType: 'invalidValue' } }),
    );
  });

  it('versions change with content, not with meta; If-Match with another is 412', () => {
    const version = versionOf({ id: '1', userName: 'ann', meta: { lastModified: 'a' } });
    expect(versionOf({ userName: 'ann', id: '1', meta: { lastModified: 'b' } })).toBe(version);
    expect(versionOf({ id: '1', userName: 'bob' })).not.toBe(version);
    expect(() => checkIfMatch(undefined, version)).not.toThrow();
    expect(() => checkIfMatch('*', version)).not.toThrow();
    expect(() => checkIfMatch(version.replace('W/', ''), version)).not.toThrow();
    const stale = (() => {
      try {
        checkIfMatch('W/"old"', version);
      } catch (error) {
        return error as PorterError;
      }
      return undefined;
    })();
    expect(stale?.httpStatus).toBe(412);
    expect(scimErrorBody(stale!)).toMatchObject({ status: '412', scimType: 'invalidVers' });
  });

  it('error bodies carry status as text, scimType and detail', () => {
    expect(scimErrorBody(scimInvalid('invalidFilter', 'filter: bad'))).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '400',
      scimType: 'invalidFilter',
      detail: 'filter: bad',
      code: 'PORTER_SCIM_INVALID',
    });
    expect(scimErrorBody(new PorterError('PORTER_SCIM_UNIQUENESS', 'taken'))).toMatchObject({
      status: '409',
      scimType: 'uniqueness',
    });
  });

  it('discovery: the User endpoint first, PATCH supported, schemas named', () => {
    const base = 'https://porter.example/scim/v2/prod';
    expect(resourceTypes(base)[0]).toMatchObject({
      endpoint: '/Users',
      schemaExtensions: [{ schema: ENTERPRISE }],
    });
    expect(serviceProviderConfig(base)).toMatchObject({
      patch: { supported: true },
      etag: { supported: true },
    });
    expect(JSON.stringify(schemas(base))).toContain('User Account');
  });
});
