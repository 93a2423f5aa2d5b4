import { randomUUID } from 'node:crypto';

/**
 * A random UUID whose first 48 bits are the time in milliseconds (the UUID version 7 layout:
 * `tttttttt-tttt-7rrr-vrrr-rrrrrrrrrrrr`, 74 random bits), so that ids made one after another sort
 * together: a B-tree index on them grows at one end, and a transaction adding many touches a few
 * pages instead of one per id (inbox receipt and dedupe ids).
 * @internal
 */
export function timeOrderedUuid(now = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  const random = randomUUID(); // xxxxxxxx-xxxx-4xxx-vxxx-xxxxxxxxxxxx
  return `${time.slice(-12, -4)}-${time.slice(-4)}-7${random.slice(15)}`;
}
