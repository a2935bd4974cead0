/**
 * A webhook's IP restrictions: comma-separated IPv4 and IPv6 addresses and CIDR ranges; empty allows everyone.
 * Entries are checked strictly (canonical dotted quads only: `0300.0250.1.1` or `10.1` are refused), and an
 * IPv4-mapped IPv6 caller (`::ffff:192.0.2.7`) matches the IPv4 rules.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';

export const MAX_ALLOWLIST_ENTRIES = 100;

const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const PREFIX = /^(0|[1-9]\d{0,2})$/;

interface Entry {
  readonly family: 'ipv4' | 'ipv6';
  readonly address: string;
  readonly prefix: number | null;
}

/** One entry, or why it is not one. */
function parseEntry(text: string): Entry | string {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const prefixText = slash < 0 ? null : text.slice(slash + 1);
  const family = DOTTED_QUAD.test(address) && isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
  if (family === null) return `"${text.slice(0, 60)}" is not an IPv4 or IPv6 address`;
  if (prefixText === null) return { family, address, prefix: null };
  const max = family === 'ipv4' ? 32 : 128;
  if (!PREFIX.test(prefixText) || Number(prefixText) > max)
    return `"${text.slice(0, 60)}": the prefix length must be 0 to ${max}`;
  return { family, address, prefix: Number(prefixText) };
}

function entriesOf(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

/** The setting as users send it; its output is the normalised list (`a, b/24`). */
export const ipAllowlistText = z
  .string()
  .max(4000, 'at most 4000 characters')
  .transform((text, ctx) => {
    const entries = entriesOf(text);
    if (entries.length > MAX_ALLOWLIST_ENTRIES) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_ALLOWLIST_ENTRIES} entries` });
      return z.NEVER;
    }
    const problems = entries.map(parseEntry).filter((entry): entry is string => typeof entry === 'string');
    if (problems.length > 0) {
      ctx.addIssue({ code: 'custom', message: problems.slice(0, 10).join('; ') });
      return z.NEVER;
    }
    return [...new Set(entries)].join(', ');
  });

export interface IpAllowlist {
  readonly empty: boolean;
  allows(address: string): boolean;
}

const MAPPED_PREFIX = '::ffff:';

/** The allowlist of a setting that passed `ipAllowlistText`. */
export function parseIpAllowlist(text: string): IpAllowlist {
  const entries = entriesOf(text)
    .map(parseEntry)
    .filter((entry): entry is Entry => typeof entry !== 'string');
  const list = new BlockList();
  for (const entry of entries) {
    if (entry.prefix === null) list.addAddress(entry.address, entry.family);
    else list.addSubnet(entry.address, entry.prefix, entry.family);
  }
  return {
    empty: entries.length === 0,
    allows(address) {
      if (entries.length === 0) return true;
      const lower = address.toLowerCase();
      const mapped = lower.startsWith(MAPPED_PREFIX) ? lower.slice(MAPPED_PREFIX.length) : null;
      if (mapped !== null && isIPv4(mapped) && list.check(mapped, 'ipv4')) return true;
      if (isIPv4(address)) return list.check(address, 'ipv4');
      if (isIPv6(address)) return list.check(address, 'ipv6');
      return false;
    },
  };
}
