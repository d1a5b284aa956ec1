/**
 * Binary searches over keys sorted by UTF-16 code units (the order of `Array.prototype.sort` and of
 * `<` on strings): how a structure loaded from a snapshot answers a few lookups without building a
 * map of every key first.
 */

/** The first position whose key is not below `key`, among `length` positions sorted by `keyAt`. */
function lowerBound(length: number, keyAt: (i: number) => string, key: string): number {
  let [lo, hi] = [0, length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyAt(mid) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of `key` in a sorted list, or −1. */
export function sortedIndexOf(sorted: readonly string[], key: string): number {
  const at = lowerBound(sorted.length, (i) => sorted[i]!, key);
  return sorted[at] === key ? at : -1;
}

/** The slot whose key is `key`, among `order` (slots sorted by key, as `slotsSortedByKey` makes them), or undefined. */
export function slotByKey(order: ArrayLike<number>, keyAt: (slot: number) => string, key: string): number | undefined {
  const at = lowerBound(order.length, (i) => keyAt(order[i]!), key);
  return at < order.length && keyAt(order[at]!) === key ? order[at] : undefined;
}

/** The slots ordered by their keys. */
export function slotsSortedByKey(slots: Iterable<number>, keyAt: (slot: number) => string): Uint32Array {
  return Uint32Array.from(slots).sort((a, b) => (keyAt(a) < keyAt(b) ? -1 : keyAt(a) > keyAt(b) ? 1 : 0));
}
