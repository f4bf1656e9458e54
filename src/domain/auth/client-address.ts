import { isIP } from 'node:net';

/**
 * The client an address stands for (the per-address login throttle, and the KDF
 * queue's fairness): an IPv4-mapped IPv6 address is its IPv4 address, and an IPv6
 * address its /64 (what one host, or one customer, gets: counting single IPv6
 * addresses would let a client rotate through billions).
 */
export function clientOf(address: string): string {
  const bare = address.replace(/%.*$/, '');
  if (/^::ffff:/i.test(bare) && isIP(bare.slice(7)) === 4) return bare.slice(7);
  if (isIP(bare) !== 6) return bare;
  const [head, tail] = bare.toLowerCase().split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${all.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}
