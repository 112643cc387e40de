import { expect } from 'chai';
import { compileAllowList, isLoopbackIp, normaliseIp } from '../../api/net';

describe('net helpers', () => {
  describe('normaliseIp', () => {
    it('strips the IPv4-mapped IPv6 prefix', () => {
      expect(normaliseIp('::ffff:10.1.2.3')).to.equal('10.1.2.3');
      expect(normaliseIp('::FFFF:127.0.0.1')).to.equal('127.0.0.1');
    });

    it('leaves plain IPv4 and other IPv6 addresses unchanged', () => {
      for (const ip of ['10.1.2.3', '::1', '2001:db8::1', 'fe80::1', '::ffff:7f00:1', '::ffff:10.1.2']) {
        expect(normaliseIp(ip)).to.equal(ip);
      }
    });
  });

  describe('isLoopbackIp', () => {
    it('is true for the whole of 127/8, ::1 and IPv4-mapped loopback', () => {
      for (const ip of ['127.0.0.1', '127.0.0.2', '127.255.255.254', '::1', '::ffff:127.0.0.1', '::ffff:127.9.8.7']) {
        expect(isLoopbackIp(ip), ip).to.equal(true);
      }
    });

    it('is false for other addresses, hostnames and nothing', () => {
      for (const ip of [
        '128.0.0.1',
        '10.0.0.1',
        '0.0.0.0',
        '::',
        '::2',
        '::ffff:10.0.0.1',
        '2001:db8::1',
        'localhost',
        '',
        undefined,
      ]) {
        expect(isLoopbackIp(ip), String(ip)).to.equal(false);
      }
    });

    it('is not fooled by a string that merely starts like a loopback address', () => {
      expect(isLoopbackIp('127.0.0.1.evil.example')).to.equal(false);
      expect(isLoopbackIp('::1, 10.0.0.1')).to.equal(false);
    });
  });

  describe('compileAllowList', () => {
    it('allows nothing when empty', () => {
      const allowed = compileAllowList([]);
      for (const ip of ['127.0.0.1', '::1', '10.0.0.1']) expect(allowed(ip), ip).to.equal(false);
    });

    it('matches a single IPv4 address exactly', () => {
      const allowed = compileAllowList(['10.1.2.3']);
      expect(allowed('10.1.2.3')).to.equal(true);
      expect(allowed('10.1.2.4')).to.equal(false);
      expect(allowed('10.1.2.30')).to.equal(false);
    });

    it('matches IPv4 CIDR ranges /8, /24 and /32 at their bounds', () => {
      const eight = compileAllowList(['10.0.0.0/8']);
      expect(eight('10.0.0.0')).to.equal(true);
      expect(eight('10.255.255.255')).to.equal(true);
      expect(eight('11.0.0.0')).to.equal(false);
      expect(eight('9.255.255.255')).to.equal(false);

      const c24 = compileAllowList(['192.168.1.0/24']);
      expect(c24('192.168.1.0')).to.equal(true);
      expect(c24('192.168.1.255')).to.equal(true);
      expect(c24('192.168.2.0')).to.equal(false);
      expect(c24('192.168.0.255')).to.equal(false);

      const host = compileAllowList(['127.0.0.2/32']);
      expect(host('127.0.0.2')).to.equal(true);
      expect(host('127.0.0.1')).to.equal(false);
      expect(host('127.0.0.3')).to.equal(false);
    });

    it('matches any of several entries', () => {
      const allowed = compileAllowList(['10.0.0.1', '192.168.0.0/16', '2001:db8::/32']);
      expect(allowed('10.0.0.1')).to.equal(true);
      expect(allowed('192.168.44.5')).to.equal(true);
      expect(allowed('2001:db8:1::5')).to.equal(true);
      expect(allowed('10.0.0.2')).to.equal(false);
      expect(allowed('172.16.0.1')).to.equal(false);
    });

    it('matches a single IPv6 address in any spelling', () => {
      const allowed = compileAllowList(['2001:db8::1']);
      expect(allowed('2001:db8::1')).to.equal(true);
      expect(allowed('2001:0db8:0000:0000:0000:0000:0000:0001')).to.equal(true);
      expect(allowed('2001:db8::2')).to.equal(false);
    });

    it('matches IPv6 CIDR ranges (2001:db8::/32, ::1/128)', () => {
      const doc = compileAllowList(['2001:db8::/32']);
      expect(doc('2001:db8::1')).to.equal(true);
      expect(doc('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff')).to.equal(true);
      expect(doc('2001:db9::1')).to.equal(false);
      expect(doc('::1')).to.equal(false);

      const lo = compileAllowList(['::1/128']);
      expect(lo('::1')).to.equal(true);
      expect(lo('::2')).to.equal(false);
      expect(lo('127.0.0.1')).to.equal(false);
    });

    it('does not let an IPv4 rule match unrelated IPv6 addresses', () => {
      const allowed = compileAllowList(['0.0.0.0/0']);
      expect(allowed('1.2.3.4')).to.equal(true);
      expect(allowed('2001:db8::1')).to.equal(false);
      expect(allowed('::1')).to.equal(false);
    });

    it('matches IPv4-mapped IPv6 client addresses against IPv4 rules', () => {
      const allowed = compileAllowList(['10.0.0.0/8', '192.168.1.7']);
      expect(allowed('::ffff:10.1.2.3')).to.equal(true);
      expect(allowed('::FFFF:10.1.2.3')).to.equal(true);
      expect(allowed('::ffff:192.168.1.7')).to.equal(true);
      expect(allowed('::ffff:11.1.2.3')).to.equal(false);
    });

    it('accepts an IPv4-mapped entry as the IPv4 address it maps', () => {
      const allowed = compileAllowList(['::ffff:10.1.2.3']);
      expect(allowed('10.1.2.3')).to.equal(true);
      expect(allowed('::ffff:10.1.2.3')).to.equal(true);
      expect(allowed('10.1.2.4')).to.equal(false);
    });

    it('answers false for a missing or malformed client address', () => {
      const allowed = compileAllowList(['0.0.0.0/0', '::/0']);
      expect(allowed(undefined)).to.equal(false);
      expect(allowed('')).to.equal(false);
      expect(allowed('localhost')).to.equal(false);
      expect(allowed('10.0.0.1 ')).to.equal(false);
    });

    it('throws on invalid entries, naming ALLOW_DOC_WHITELIST', () => {
      const bad = [
        'not-an-ip',
        'localhost',
        '300.1.1.1',
        '10.0.0',
        '',
        '10.0.0.0/33',
        '10.0.0.0/64',
        '::1/129',
        '2001:db8::/200',
        'a/b/c',
        '10.0.0.0/8/8',
        '10.0.0.0/',
        '10.0.0.0/-1',
        '10.0.0.0/x',
        '10.0.0.0/8.5',
      ];
      for (const entry of bad) {
        expect(() => compileAllowList([entry]), JSON.stringify(entry)).to.throw(/ALLOW_DOC_WHITELIST/);
      }
    });

    it('throws when any one entry of several is invalid', () => {
      expect(() => compileAllowList(['10.0.0.1', '::1/128', '10.0.0.0/33'])).to.throw(/ALLOW_DOC_WHITELIST/);
    });

    it('accepts the largest prefixes (/32 for IPv4, /128 for IPv6) and /0', () => {
      expect(() => compileAllowList(['10.0.0.1/32', '::1/128', '0.0.0.0/0', '::/0'])).to.not.throw();
    });
  });
});
