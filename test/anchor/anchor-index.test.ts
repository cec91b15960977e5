import { describe, expect, it } from 'vitest';
import { AnchorIndex, findByAnchor, readAnchor, writeAnchor } from '../../src/anchor/index.js';

const users = [
  { userId: 1, username: 'jmuller', email: 'jose@x', substitutionMap: { porterAnchor: 'E1001' } },
  { userId: 2, username: 'mgarcia', email: 'maria@x', substitutionMap: {} },
  { userId: 3, username: 'mg2', email: 'maria@x' },
  { userId: 4, username: 'twin1', substitutionMap: { porterAnchor: 'E9' } },
  { userId: 5, username: 'twin2', substitutionMap: { porterAnchor: 'E9' } },
];

describe('AnchorIndex', () => {
  const index = AnchorIndex.of('users', users, 'porterAnchor');

  it('matches by anchor first, whatever the username or email is now', () => {
    const match = index.match({ anchor: 'E1001', key: 'jmueller', email: 'new@x' }, 'username');
    expect(match).toMatchObject({ kind: 'anchored', current: { userId: 1 } });
  });

  it('joins a user without an anchor by username, or by email, once', () => {
    expect(index.match({ anchor: 'E2', key: 'mgarcia' }, 'username')).toMatchObject({
      kind: 'joined',
      by: 'username',
      current: { userId: 2 },
    });
    expect(index.match({ anchor: 'E2', key: 'mgarcia' }, 'none')).toMatchObject({
      kind: 'conflict',
    });
    expect(index.match({ anchor: 'E7', key: 'brandnew' }, 'username')).toEqual({ kind: 'new' });
  });

  it('fails, never guesses: an ambiguous join, an anchor on two users, a name held by another', () => {
    const ambiguous = index.match({ anchor: 'E2', key: 'maria', email: 'MARIA@x' }, 'email');
    expect(ambiguous).toMatchObject({ kind: 'conflict' });
    expect((ambiguous as { reason: string }).reason).toContain('mgarcia');
    expect((ambiguous as { reason: string }).reason).toContain('mg2');
    const twice = index.match({ anchor: 'E9', key: 'twin1' }, 'username');
    expect((twice as { reason: string }).reason).toMatch(/twin1.*and twin2/);
    const taken = index.match({ anchor: 'E1001', key: 'mgarcia' }, 'username');
    expect((taken as { reason: string }).reason).toContain('held by mgarcia');
    expect(findByAnchor('users', users, 'E9', 'porterAnchor').kind).toBe('conflict');
    expect(findByAnchor('users', users, 'E1001', 'porterAnchor')).toMatchObject({
      kind: 'anchored',
      current: { userId: 1 },
    });
  });

  it("keeps a group's anchor as a tag at the end of its description", () => {
    const group: Record<string, unknown> = { id: 7, name: 'Marketing', description: 'Team' };
    writeAnchor('groups', group, 'g-1', 'porterAnchor');
    expect(group.description).toBe('Team [porterAnchor:g-1]');
    writeAnchor('groups', group, 'g-2', 'porterAnchor');
    expect(group.description).toBe('Team [porterAnchor:g-2]');
    expect(readAnchor('groups', group, 'porterAnchor')).toBe('g-2');
    const user: Record<string, unknown> = { substitutionMap: { startDate: '2027-03-01' } };
    writeAnchor('users', user, 'E1', 'hrId');
    expect(user.substitutionMap).toEqual({ startDate: '2027-03-01', hrId: 'E1' });
  });
});
