/**
 * The app's IP access list as a check of client addresses: an entry is an address or a CIDR block (IPv4 or
 * IPv6); `0.0.0.0` or `0.0.0.0/0` allows every IPv4 address. An IPv4 address seen as IPv6 (`::ffff:a.b.c.d`, a
 * dual-stack listener's form) is checked as IPv4.
 */
import { BlockList, isIP } from 'node:net';
import type { AppConfig } from './model';

/** An IPv4 or IPv6 address, or a CIDR block of one (`10.0.0.0/8`, `2001:db8::/32`). */
export function isIpOrCidr(text: string): boolean {
  const [address = '', prefix, ...rest] = text.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/** A check of client addresses against the entries (each valid by `isIpOrCidr`; others are skipped). */
export function ipAccessCheck(entries: readonly string[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    if (!isIpOrCidr(entry)) continue;
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (address === '0.0.0.0' && (prefix === undefined || prefix === '0')) list.addSubnet('0.0.0.0', 0, 'ipv4');
    else if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return (ip) => {
    const plain = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
    const family = isIP(plain);
    return family !== 0 && list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * The address an access list judges a request by: the connection's peer, or, when that peer is a proxy on a
 * loopback or private address, the last `X-Forwarded-For` entry (the one that proxy appended: entries before
 * it are the client's to write, so they are never trusted).
 */
export function accessAddress(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined): string {
  const peer = (remoteAddress ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
  if (!header || !PROXY_RANGES(peer)) return peer;
  const last = header.split(',').map((part) => part.trim()).filter(Boolean).pop();
  return last && isIP(last.replace(/^::ffff:/, '')) ? last.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '') : peer;
}

const PROXY_RANGES = ipAccessCheck(['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '::1/128', 'fc00::/7']);

/** Each deployed configuration's check (undefined: the app has no access list), made once per configuration. */
const checks = new WeakMap<AppConfig, ((ip: string) => boolean) | undefined>();

/** The check of an app's IP access list, or undefined when it has none (every address is served). */
export function accessCheckOf(config: AppConfig): ((ip: string) => boolean) | undefined {
  if (checks.has(config)) return checks.get(config);
  const entries = config.settings.security?.ip_access_list ?? [];
  const check = entries.length > 0 ? ipAccessCheck(entries.map((entry) => entry.address)) : undefined;
  checks.set(config, check);
  return check;
}
