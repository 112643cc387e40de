/**
 * Which addresses an outbound request may not reach (contract §2): the ranges and the IPv6 forms that embed or tunnel
 * to an IPv4 address. Pure: tests exercise private, link-local and metadata ranges here, never as live targets.
 */
import { BlockList, isIP } from 'node:net';

/**
 * IPv4: unspecified/"this network", private, CGNAT, loopback, link-local (cloud metadata 169.254.169.254), IETF
 * protocol assignments, TEST-NET-1/2/3, 6to4 relay anycast, benchmarking, multicast, reserved and broadcast.
 */
const V4_RANGES = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
/**
 * IPv6: unspecified, loopback, local-use NAT64, discard-only, Teredo, documentation, unique local (includes the EC2
 * metadata address fd00:ec2::254), link-local, deprecated site-local, multicast. Forms embedding IPv4 are checked
 * against the IPv4 list by {@link embeddedIPv4}.
 */
const V6_RANGES = [
  '::/128',
  '::1/128',
  '64:ff9b:1::/48',
  '100::/64',
  '2001::/32',
  '2001:db8::/32',
  '3fff::/20',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

function blockList(ranges: string[], type: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  for (const r of ranges) {
    const [net, bits] = r.split('/');
    list.addSubnet(net, Number(bits), type);
  }
  return list;
}
const V4 = blockList(V4_RANGES, 'ipv4');
const V6 = blockList(V6_RANGES, 'ipv6');

/** The 16 bytes of an IPv6 address (zone already removed), or null when it is not one. */
function ipv6Bytes(ip: string): Uint8Array | null {
  let s = ip;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    s = s.slice(0, quad.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...tail];
  if (groups.length !== 8) return null;
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    if (!/^[0-9a-f]{1,4}$/i.test(groups[i])) return null;
    const v = parseInt(groups[i], 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  }
  return out;
}

const dotted = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const zeros = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/** The IPv4 address an IPv6 address stands for or tunnels to: mapped, compatible, SIIT, NAT64 and 6to4 forms. */
function embeddedIPv4(b: Uint8Array): string | null {
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return dotted(b, 12); // ::ffff:a.b.c.d
  if (zeros(b, 0, 12)) return dotted(b, 12); // ::a.b.c.d (deprecated compatible form)
  if (zeros(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(b, 10, 12)) return dotted(b, 12); // ::ffff:0:a.b.c.d
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12)) return dotted(b, 12); // NAT64
  if (b[0] === 0x20 && b[1] === 0x02) return dotted(b, 2); // 6to4 2002:AABB:CCDD::/48
  return null;
}

/**
 * True for addresses an outbound request must not reach: loopback, private, link-local, metadata, unspecified,
 * CGNAT, multicast, reserved and documentation ranges, and IPv6 forms that embed or tunnel to such an IPv4 address.
 * Anything that is not an IP address counts as forbidden (fail closed).
 */
export function isForbiddenAddress(ip: string): boolean {
  const a = ip
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '');
  const family = isIP(a);
  if (family === 4) return V4.check(a, 'ipv4');
  if (family !== 6) return true;
  const bytes = ipv6Bytes(a);
  if (!bytes) return true;
  const v4 = embeddedIPv4(bytes);
  if (v4 !== null && V4.check(v4, 'ipv4')) return true;
  return V6.check(a, 'ipv6');
}
