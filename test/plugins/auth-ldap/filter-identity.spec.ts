import { expect } from 'chai';
import { EqualityFilter, FilterParser, AndFilter, OrFilter } from 'ldapts';
import { escapeFilterValue, loginAttribute, searchFilter } from '../../../plugins/auth-ldap/filter.ts';
import { identityOf, requestedAttributes, type DirectoryEntry } from '../../../plugins/auth-ldap/identity.ts';

describe('auth-ldap search filter', () => {
  const escapes: [string, string][] = [
    ['alice', 'alice'],
    ['*', '\\2a'],
    ['(', '\\28'],
    [')', '\\29'],
    ['\\', '\\5c'],
    ['\u0000', '\\00'],
    ['admin)(|(uid=*', 'admin\\29\\28|\\28uid=\\2a'],
    ['alic\\65', 'alic\\5c65'],
    ['jürgen.müller', 'jürgen.müller'],
    ['r2(d2)', 'r2\\28d2\\29'],
  ];
  for (const [raw, escaped] of escapes) {
    it(`escapes ${JSON.stringify(raw)} as ${JSON.stringify(escaped)} (RFC 4515)`, () => {
      expect(escapeFilterValue(raw)).to.equal(escaped);
    });
  }

  it('replaces every {0} of the template', () => {
    expect(searchFilter('(|(uid={0})(mail={0}))', 'a*')).to.equal('(|(uid=a\\2a)(mail=a\\2a))');
  });

  /** Whatever the login ID, the filter keeps the template's shape and asserts the login ID literally. */
  const attacks = ['*', 'ali*', '*)(uid=*', ')(uid=*', 'admin)(|(uid=*', 'alice)(objectClass=*', 'x\\', '\\2a', 'a\u0000b', 'jürgen*', '((((', '))))'];
  for (const loginId of attacks) {
    it(`looks up ${JSON.stringify(loginId)} as the literal value it is`, () => {
      const filter = FilterParser.parseString(searchFilter('(&(objectClass=inetOrgPerson)(uid={0}))', loginId));
      expect(filter).to.be.instanceOf(AndFilter);
      const parts = (filter as AndFilter).filters;
      expect(parts).to.have.length(2);
      expect(parts[1]).to.be.instanceOf(EqualityFilter);
      expect((parts[1] as EqualityFilter).attribute).to.equal('uid');
      expect((parts[1] as EqualityFilter).value).to.equal(loginId);
    });
  }

  it('names the one attribute the filter compares the login ID with, if there is one', () => {
    expect(loginAttribute('uid={0}')).to.equal('uid');
    expect(loginAttribute('(&(objectClass=person)(mail={0}))')).to.equal('mail');
    expect(loginAttribute('(|(uid={0})(UID={0}))')).to.equal('uid');
    expect(loginAttribute('(|(uid={0})(mail={0}))')).to.equal(undefined);
    expect(loginAttribute('(cn=*{0}*)')).to.equal(undefined);
    expect(loginAttribute('(uid>={0})')).to.equal(undefined);
  });

  it('keeps an OR template an OR of two literal assertions', () => {
    const filter = FilterParser.parseString(searchFilter('(|(uid={0})(mail={0}))', '*)(cn=*')) as OrFilter;
    expect(filter).to.be.instanceOf(OrFilter);
    expect(filter.filters.map((f) => (f as EqualityFilter).value)).to.deep.equal(['*)(cn=*', '*)(cn=*']);
  });
});

describe('auth-ldap identity', () => {
  const names = { groups: 'businessCategory', tenantId: 'departmentNumber', commonName: 'cn', familyName: 'sn', givenName: 'givenName', tenantName: 'o' };

  it('maps every configured attribute, groups with all their values', () => {
    const entry: DirectoryEntry = {
      dn: 'uid=alice,ou=people,dc=example,dc=org',
      businessCategory: ['analysts', 'editors'], departmentNumber: 'T-4711', cn: 'Alice Liddell', sn: 'Liddell', givenName: 'Alice', o: 'Research',
    };
    expect(identityOf(entry, 'alice', names)).to.deep.equal({
      loginId: 'alice', groups: ['analysts', 'editors'], tenantId: 'T-4711', commonName: 'Alice Liddell', familyName: 'Liddell', givenName: 'Alice', tenantName: 'Research',
    });
  });

  it('finds attributes whatever the case the directory returns them in', () => {
    const entry: DirectoryEntry = { dn: 'x', BUSINESSCATEGORY: 'g1', DepartmentNumber: 't', CN: 'C', SN: 'S', givenname: 'G', O: 'Research' };
    expect(identityOf(entry, 'x', names)).to.deep.equal({
      loginId: 'x', groups: ['g1'], tenantId: 't', commonName: 'C', familyName: 'S', givenName: 'G', tenantName: 'Research',
    });
  });

  it('takes the first value of a single-valued part, and decodes binary values as UTF-8', () => {
    const entry: DirectoryEntry = { dn: 'x', cn: ['First', 'Second'], sn: Buffer.from('Müller', 'utf8'), businessCategory: [Buffer.from('g', 'utf8')] as Buffer[] };
    const identity = identityOf(entry, 'x', names);
    expect(identity.commonName).to.equal('First');
    expect(identity.familyName).to.equal('Müller');
    expect(identity.groups).to.deep.equal(['g']);
  });

  it('takes the login ID as the entry holds it when the directory matched another case or spacing', () => {
    const entry: DirectoryEntry = { dn: 'x', uid: ['alice', 'a.liddell'] };
    expect(identityOf(entry, 'ALICE', {}, 'uid').loginId).to.equal('alice');
    expect(identityOf(entry, '  A.Liddell ', {}, 'uid').loginId).to.equal('a.liddell');
    expect(identityOf(entry, 'a.liddell', {}, 'uid').loginId).to.equal('a.liddell');
    // No login attribute, or no value that matches: the typed login ID.
    expect(identityOf(entry, 'ALICE', {}).loginId).to.equal('ALICE');
    expect(identityOf({ dn: 'x', mail: 'alice@example.org' }, 'ALICE', {}, 'uid').loginId).to.equal('ALICE');
    expect(requestedAttributes({}, 'uid')).to.deep.equal(['uid']);
  });

  it('leaves out what the entry does not hold; configured groups are then an empty list', () => {
    expect(identityOf({ dn: 'x' }, 'x', names)).to.deep.equal({ loginId: 'x', groups: [] });
  });

  it('ignores blank values and repeated groups', () => {
    const entry: DirectoryEntry = { dn: 'x', businessCategory: ['a', ' ', 'a', 'b '], o: '  ' };
    expect(identityOf(entry, 'x', names)).to.deep.equal({ loginId: 'x', groups: ['a', 'b'] });
  });

  it('maps nothing that is not configured, even when the entry holds it', () => {
    const entry: DirectoryEntry = { dn: 'x', businessCategory: 'g', o: 'Research', cn: 'C' };
    expect(identityOf(entry, 'x', {})).to.deep.equal({ loginId: 'x' });
    expect(identityOf(entry, 'x', { commonName: 'cn' })).to.deep.equal({ loginId: 'x', commonName: 'C' });
  });

  it('never takes the DN for an attribute', () => {
    expect(identityOf({ dn: 'uid=x' }, 'x', { commonName: 'dn' })).to.deep.equal({ loginId: 'x' });
  });

  it('keeps the login ID the caller typed', () => {
    expect(identityOf({ dn: 'uid=Alice', uid: 'Alice' }, 'alice', {}).loginId).to.equal('alice');
  });

  it('asks the directory for exactly the configured attributes, or for none', () => {
    expect(requestedAttributes(names)).to.deep.equal(['businessCategory', 'departmentNumber', 'cn', 'sn', 'givenName', 'o']);
    expect(requestedAttributes({ familyName: 'sn', commonName: 'sn' })).to.deep.equal(['sn']);
    expect(requestedAttributes({})).to.deep.equal(['1.1']);
  });
});
