import { BlockList, isIP } from 'node:net';

/** Strips the IPv4-mapped IPv6 prefix so `::ffff:127.0.0.1` is treated as `127.0.0.1`. */
export function normaliseIp(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1] : ip;
}

export function isLoopbackIp(ip: string | undefined): boolean {
  if (!ip) return false;
  const a = normaliseIp(ip);
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a);
}

/**
 * A compiled allow-list of IPs and CIDR ranges, IPv4 and IPv6. Invalid entries throw at build time so a typo in
 * `ALLOW_DOC_WHITELIST` stops the server instead of silently allowing nothing.
 */
export function compileAllowList(entries: string[]): (ip: string | undefined) => boolean {
  const list = new BlockList();
  for (const raw of entries) {
    const [addr, bits, ...rest] = raw.split('/');
    const a = normaliseIp(addr.trim());
    const family = isIP(a);
    if (!family || rest.length) throw new Error(`ALLOW_DOC_WHITELIST: invalid entry ${JSON.stringify(raw)}`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) {
      list.addAddress(a, type);
      continue;
    }
    const prefix = Number(bits);
    if (!/^\d+$/.test(bits) || prefix > (family === 4 ? 32 : 128)) {
      throw new Error(`ALLOW_DOC_WHITELIST: invalid prefix in ${JSON.stringify(raw)}`);
    }
    list.addSubnet(a, prefix, type);
  }
  return (ip) => {
    if (!ip) return false;
    const a = normaliseIp(ip);
    const family = isIP(a);
    if (!family) return false;
    return list.check(a, family === 4 ? 'ipv4' : 'ipv6');
  };
}
