import { clientAllows, scopesGrant } from '../src/domain/scopes';

describe("a client's scopes cap its tokens", () => {
  it.each([
    ['read', 'read', true],
    ['read', 'write', false],
    ['read write', 'write', true],
    ['write  read', 'read', true],
    ['write\tread', 'read', true],
    ['readwrite', 'read', false],
    ['', 'read', false],
  ] as const)('%j allows %s: %s', (scopes, access, allowed) => {
    // asked twice: the second answer comes from the split kept for that string
    expect([clientAllows(scopes, access), clientAllows(scopes, access)]).toEqual([allowed, allowed]);
  });

  it('answers the same after more distinct scope strings than it keeps', () => {
    for (let i = 0; i < 2500; i++) expect(clientAllows(`read x${i}`, 'read')).toBe(true);
    expect(clientAllows('write', 'read')).toBe(false);
    expect(clientAllows('read write', 'write')).toBe(true);
  });
});

describe('token scopes grant endpoints', () => {
  it.each([
    [['read'], 'read', undefined, true],
    [['write'], 'read', undefined, false],
    [['users:read'], 'read', 'users', true],
    [['users:read'], 'write', 'users', false],
    [['users'], 'write', 'users', true],
    [['auditlogs'], 'write', 'auditlogs', false],
    [['tickets:read'], 'read', undefined, false],
  ] as const)('%j grants %s on %s: %s', (scopes, access, resource, granted) => {
    expect(scopesGrant(scopes, access, resource)).toBe(granted);
  });
});
