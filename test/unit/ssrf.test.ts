import { expect } from 'chai';
import { isForbiddenAddress } from '../../providers/http/address-classifier';
import { checkTarget, ForbiddenTargetError, OutboundError, type OutboundPolicy } from '../../providers/http/ssrf';

// No traffic: isForbiddenAddress is a pure function, and checkTarget only resolves literal IPs and `localhost`.

const forbidden: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback range'],
  ['::1', 'IPv6 loopback'],
  ['10.0.0.1', 'private 10/8'],
  ['172.16.0.1', 'private 172.16/12, start'],
  ['172.31.255.255', 'private 172.16/12, end'],
  ['192.168.1.1', 'private 192.168/16'],
  ['169.254.169.254', 'cloud metadata'],
  ['169.254.0.1', 'link-local'],
  ['fd00:ec2::254', 'EC2 IPv6 metadata'],
  ['fc00::1', 'unique local'],
  ['fdff:ffff::1', 'unique local, end'],
  ['fe80::1', 'IPv6 link-local'],
  ['fe80::1%eth0', 'IPv6 link-local with zone'],
  ['febf::1', 'IPv6 link-local, end'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'this network'],
  ['::', 'IPv6 unspecified'],
  ['100.64.0.1', 'CGNAT'],
  ['100.127.255.255', 'CGNAT, end'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast SSDP'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['ff02::1', 'IPv6 multicast'],
  ['192.0.2.10', 'TEST-NET-1'],
  ['198.18.0.1', 'benchmarking'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback, dotted'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped loopback, uncompressed'],
  ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata, hex'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::7f00:1', 'IPv4-compatible loopback, hex'],
  ['::ffff:0:127.0.0.1', 'SIIT-translated loopback'],
  ['64:ff9b::7f00:1', 'NAT64 of loopback'],
  ['64:ff9b::10.0.0.1', 'NAT64 of private'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
  ['64:ff9b:1::1', 'local-use NAT64'],
  ['2002:7f00:1::', '6to4 of loopback'],
  ['2002:a9fe:a9fe::1', '6to4 of metadata'],
  ['2002:c0a8:0101::1', '6to4 of 192.168.1.1'],
  ['2001:db8::1', 'IPv6 documentation'],
  ['[::1]', 'bracketed IPv6 loopback'],
  ['localhost', 'not an IP: fail closed'],
  ['', 'empty'],
  ['not-an-ip', 'garbage'],
];

const allowed: [string, string][] = [
  ['8.8.8.8', 'Google DNS'],
  ['1.1.1.1', 'Cloudflare DNS'],
  ['93.184.215.14', 'public'],
  ['172.15.255.255', 'just below 172.16/12'],
  ['172.32.0.1', 'just above 172.16/12'],
  ['100.63.255.255', 'just below CGNAT'],
  ['100.128.0.1', 'just above CGNAT'],
  ['169.253.255.255', 'just below link-local'],
  ['223.255.255.255', 'just below multicast'],
  ['11.0.0.1', 'just above 10/8'],
  ['2606:4700:4700::1111', 'Cloudflare DNS IPv6'],
  ['2001:4860:4860::8888', 'Google DNS IPv6'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public'],
  ['64:ff9b::808:808', 'NAT64 of public'],
  ['2002:808:808::1', '6to4 of public'],
];

describe('isForbiddenAddress', () => {
  for (const [ip, why] of forbidden)
    it(`refuses ${ip || '(empty)'} (${why})`, () => expect(isForbiddenAddress(ip)).to.equal(true));
  for (const [ip, why] of allowed) it(`allows ${ip} (${why})`, () => expect(isForbiddenAddress(ip)).to.equal(false));
});

describe('WHATWG URL parsing', () => {
  it('normalises decimal, octal, hex and short IPv4 forms to dotted quads', () => {
    for (const u of [
      'http://2130706433/',
      'http://0x7f.1/',
      'http://017700000001/',
      'http://127.1/',
      'http://0x7f000001/',
    ]) {
      expect(new URL(u).hostname, u).to.equal('127.0.0.1');
    }
  });

  it('normalises IPv4-mapped IPv6 literals to hex', () => {
    expect(new URL('http://[::ffff:127.0.0.1]/').hostname).to.equal('[::ffff:7f00:1]');
  });
});

describe('checkTarget', () => {
  const strict: OutboundPolicy = { allowPrivate: false };
  const refuses = async (url: string, policy: OutboundPolicy = strict) => {
    const err = await checkTarget(url, policy).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err, url).to.be.instanceOf(ForbiddenTargetError);
    return err as ForbiddenTargetError;
  };

  it('refuses loopback, metadata and private literals in any notation', async () => {
    for (const u of [
      'http://127.0.0.1/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://017700000001/',
      'http://127.1:8080/x',
      'http://0/',
      'http://[::1]/',
      'http://[::]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://169.254.169.254/latest/meta-data/',
      'https://10.1.2.3/',
      'http://[64:ff9b::7f00:1]/',
    ]) {
      await refuses(u);
    }
  });

  it('refuses a name that resolves to loopback', async () => {
    const err = await refuses('http://localhost:8080/hook');
    expect(err.host).to.equal('localhost:8080');
    expect(err.message).to.match(/resolves to/);
  });

  it('refuses every spelling of a loopback name the same way: case, the root dot, names under localhost', async () => {
    for (const u of [
      'http://localhost.:8080/hook',
      'http://LOCALHOST:8080/hook',
      'http://LocalHost./hook',
      'http://sub.localhost/hook',
      'http://sub.localhost./hook',
      'http://127.0.0.1.:8080/hook',
      'http://0.0.0.0:8080/',
      'http://[::ffff:0:7f00:1]/',
      'http://[0:0:0:0:0:ffff:127.0.0.1]/',
      'http://[::127.0.0.1]/',
    ]) {
      const err = await refuses(u);
      expect(err.message, u).to.match(/private, loopback/);
    }
  });

  it('reads a trailing-dot name as the name itself when the policy allows it', async () => {
    const t = await checkTarget('http://localhost.:9/', { allowPrivate: true });
    expect(t.hostname).to.equal('localhost');
    expect(isForbiddenAddress(t.address)).to.equal(true);
  });

  it('an IPv6 literal with a zone id is not a URL (refused before any lookup)', async () => {
    for (const u of ['http://[fe80::1%25eth0]/', 'http://[fe80::1%eth0]/']) {
      const err = await checkTarget(u, { allowPrivate: true }).catch((e: unknown) => e);
      expect(err, u).to.be.instanceOf(OutboundError).with.property('code', 'invalid_url');
    }
  });

  it('refuses other schemes', async () => {
    for (const u of [
      'file:///etc/passwd',
      'ftp://example.com/',
      'gopher://127.0.0.1:25/',
      'data:text/plain,hi',
      'javascript:alert(1)',
    ]) {
      await refuses(u, { allowPrivate: true });
    }
  });

  it('refuses credentials in the URL without repeating them', async () => {
    const err = await refuses('https://user:s3cr3t-pw@example.com/hook', { allowPrivate: true });
    expect(err.message).to.not.include('s3cr3t-pw');
    expect(err.message).to.not.include('user');
    expect(err.host).to.equal('example.com');
  });

  it('refuses plain http when the policy wants https', async () => {
    await refuses('http://8.8.8.8/', { allowPrivate: true, allowHttp: false });
  });

  it('accepts a public literal without any lookup', async () => {
    const t = await checkTarget('https://8.8.8.8/dns-query', strict);
    expect(t).to.include({ hostname: '8.8.8.8', port: 443, address: '8.8.8.8', family: 4 });
  });

  it('accepts a bracketed public IPv6 literal and unbrackets it', async () => {
    const t = await checkTarget('http://[2606:4700:4700::1111]:8080/', strict);
    expect(t).to.include({ hostname: '2606:4700:4700::1111', port: 8080, address: '2606:4700:4700::1111', family: 6 });
  });

  it('lets private targets through when the policy allows them', async () => {
    const t = await checkTarget('http://localhost:9/', { allowPrivate: true });
    expect(t.hostname).to.equal('localhost');
    expect(t.addresses).to.not.be.empty;
    expect(isForbiddenAddress(t.address)).to.equal(true);
  });

  it('lets exactly the allowed host:port through, and no other port', async () => {
    const policy: OutboundPolicy = { allowPrivate: false, allowedHosts: ['127.0.0.1:8080', '[::1]:80'] };
    expect((await checkTarget('http://127.0.0.1:8080/a', policy)).address).to.equal('127.0.0.1');
    expect((await checkTarget('http://[::1]/', policy)).address).to.equal('::1');
    await refuses('http://127.0.0.1:8081/a', policy);
    await refuses('http://169.254.169.254/latest', policy);
  });

  it('reports an unparsable URL as an OutboundError', async () => {
    const err = await checkTarget('not a url', strict).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OutboundError).with.property('code', 'invalid_url');
  });
});
