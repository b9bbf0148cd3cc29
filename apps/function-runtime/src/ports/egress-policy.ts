import { BlockList, isIP } from 'node:net';

/**
 * Where functions' `context.http` may connect. Public addresses are open; loopback, link-local (cloud
 * metadata at 169.254.169.254), private, shared, reserved and multicast ranges are closed, in every spelling
 * an address has (IPv4-mapped and -translated IPv6 forms are judged by the IPv4 address inside). An allow
 * list (TESSERA_FUNCTION_HTTP_ALLOW) opens CIDR blocks, addresses or host names an operator wants reachable.
 *
 * The policy judges addresses, not URLs: the HTTP port applies it to the address a connection is about to
 * use, after name resolution, for the first request and every redirect. It must not resolve names itself.
 */
export class EgressPolicy {
  private readonly allowedBlocks = new BlockList();
  private readonly allowedHosts = new Set<string>();
  private readonly allowedSuffixes: string[] = [];
  private readonly allowAll: boolean;

  constructor(allow: readonly string[] = []) {
    let all = false;
    for (const entry of allow) {
      const value = entry.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
      if (!value) continue;
      if (value === '*') all = true;
      else if (value.includes('/')) addSubnet(this.allowedBlocks, value);
      else if (isIP(value)) this.allowedBlocks.addAddress(value, isIP(value) === 6 ? 'ipv6' : 'ipv4');
      else if (value.startsWith('*.')) this.allowedSuffixes.push(value.slice(1).replace(/\.$/, ''));
      else this.allowedHosts.add(value.replace(/\.$/, ''));
    }
    this.allowAll = all;
  }

  /** Whether the allow list names this host (as written in the URL): then whatever it resolves to is allowed. */
  allowsHost(hostname: string): boolean {
    if (this.allowAll) return true;
    const host = hostname.toLowerCase().replace(/\.$/, '');
    return this.allowedHosts.has(host) || this.allowedSuffixes.some((suffix) => host.endsWith(suffix));
  }

  /** Why an address may not be reached, or undefined when it may. */
  refusal(address: string): string | undefined {
    if (this.allowAll) return undefined;
    const family = isIP(address);
    if (family === 0) return 'not an IP address';
    if (this.allowedBlocks.check(address, family === 6 ? 'ipv6' : 'ipv4')) return undefined;
    if (family === 6) {
      const embedded = embeddedIpv4(address);
      if (embedded !== undefined) {
        if (this.allowedBlocks.check(embedded, 'ipv4')) return undefined;
        const reason = classify(ipv4Denied, embedded, 'ipv4');
        return reason ? `${reason} (as ${embedded})` : undefined;
      }
      return classify(ipv6Denied, address, 'ipv6');
    }
    return classify(ipv4Denied, address, 'ipv4');
  }
}

/** An error a function sees when a destination is refused. */
export class EgressDeniedError extends Error {
  constructor(
    readonly url: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(
      `context.http refused to connect to ${url} (${address}: ${reason}): functions may not reach loopback, link-local or private addresses; an operator can allow destinations with TESSERA_FUNCTION_HTTP_ALLOW`,
    );
    this.name = 'EgressDeniedError';
  }
}

type DeniedRange = [network: string, prefix: number, reason: string];

const ipv4Ranges: DeniedRange[] = [
  ['0.0.0.0', 8, '"this network" address'],
  ['10.0.0.0', 8, 'private address'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT) address'],
  ['127.0.0.0', 8, 'loopback address'],
  ['169.254.0.0', 16, 'link-local address (cloud metadata)'],
  ['172.16.0.0', 12, 'private address'],
  ['192.0.0.0', 24, 'IETF protocol assignment'],
  ['192.0.2.0', 24, 'documentation address'],
  ['192.88.99.0', 24, '6to4 relay anycast address'],
  ['192.168.0.0', 16, 'private address'],
  ['198.18.0.0', 15, 'benchmarking address'],
  ['198.51.100.0', 24, 'documentation address'],
  ['203.0.113.0', 24, 'documentation address'],
  ['224.0.0.0', 4, 'multicast address'],
  ['240.0.0.0', 4, 'reserved address'],
];

const ipv6Ranges: DeniedRange[] = [
  ['::', 128, 'unspecified address'],
  ['::1', 128, 'loopback address'],
  ['::', 96, 'IPv4-compatible address'],
  ['100::', 64, 'discard-only address'],
  ['2001::', 23, 'IETF protocol assignment'],
  ['2001:db8::', 32, 'documentation address'],
  ['fc00::', 7, 'unique local (private) address'],
  ['fe80::', 10, 'link-local address'],
  ['fec0::', 10, 'site-local address'],
  ['ff00::', 8, 'multicast address'],
];

function rangeLists(ranges: DeniedRange[], family: 'ipv4' | 'ipv6'): Array<{ list: BlockList; reason: string }> {
  return ranges.map(([network, prefix, reason]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return { list, reason };
  });
}

const ipv4Denied = rangeLists(ipv4Ranges, 'ipv4');
const ipv6Denied = rangeLists(ipv6Ranges, 'ipv6');

function classify(ranges: Array<{ list: BlockList; reason: string }>, address: string, family: 'ipv4' | 'ipv6'): string | undefined {
  return ranges.find((range) => range.list.check(address, family))?.reason;
}

function addSubnet(list: BlockList, cidr: string): void {
  const [network = '', prefix = ''] = cidr.split('/');
  const family = isIP(network);
  if (family === 0) throw new Error(`invalid CIDR block "${cidr}"`);
  list.addSubnet(network, Number(prefix), family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The IPv4 address an IPv6 address carries and a host would reach through it: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`).
 */
export function embeddedIpv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (!words) return undefined;
  const v4 = (high: number, low: number): string => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  const zero = (from: number, to: number): boolean => words.slice(from, to).every((word) => word === 0);
  if (zero(0, 5) && words[5] === 0xffff) return v4(words[6], words[7]);
  if (zero(0, 4) && words[4] === 0xffff && words[5] === 0) return v4(words[6], words[7]);
  if (words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6)) return v4(words[6], words[7]);
  if (words[0] === 0x2002) return v4(words[1], words[2]);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (zone id dropped), or undefined when it is not one. */
function ipv6Words(address: string): number[] | undefined {
  const text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) return undefined;
  const expand = (part: string): number[] => {
    if (!part) return [];
    const pieces = part.split(':');
    const last = pieces[pieces.length - 1];
    const words = pieces.slice(0, last.includes('.') ? -1 : undefined).map((piece) => parseInt(piece, 16));
    if (last.includes('.')) {
      const [a = 0, b = 0, c = 0, d = 0] = last.split('.').map(Number);
      words.push((a << 8) | b, (c << 8) | d);
    }
    return words;
  };
  const [head = '', tail] = text.split('::');
  const front = expand(head);
  if (tail === undefined) return front;
  const back = expand(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}
