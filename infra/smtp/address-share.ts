/**
 * Who a connection to the SMTP listener counts against. Before RCPT TO nothing says which system a connection
 * is for, so the listener's connections are shared out by where they come from: an IPv4 address, or an IPv6
 * /64 (one network's hosts hold a whole /64, so a single address would be no limit at all).
 */
import { isIPv4, isIPv6 } from 'node:net';

const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The groups of an IPv6 address written out (8 of them; an IPv4 tail counts as two), or null. */
function ipv6Groups(address: string): string[] | null {
  const [head = '', tail, ...more] = address.split('::');
  if (more.length > 0) return null;
  const groupsOf = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group.toLowerCase()]));
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  const missing = 8 - front.length - back.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  return [...front, ...Array<string>(missing).fill('0'), ...back].map((group) =>
    group.replace(/^0+(?=.)/, ''),
  );
}

/** The share `address` counts in: itself for IPv4 (an IPv4-mapped IPv6 address too), its /64 for IPv6. */
export function addressShareOf(address: string): string {
  const mapped = IPV4_MAPPED.exec(address)?.[1];
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) return address;
  const groups = ipv6Groups(bare);
  return groups === null ? bare.toLowerCase() : `${groups.slice(0, 4).join(':')}::/64`;
}
