/**
 * Index of `key` in a list sorted by UTF-16 code units (the order of `Array.prototype.sort` and of
 * `<` on strings), or −1: how a structure loaded from a snapshot answers a few lookups without
 * building a map of every key first.
 */
export function sortedIndexOf(sorted: readonly string[], key: string): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo] === key ? lo : -1;
}

/**
 * The slot whose key is `key`, among `order` (slots sorted by key, as `slotsSortedByKey` makes
 * them), or undefined.
 */
export function slotByKey(order: ArrayLike<number>, keyAt: (slot: number) => string, key: string): number | undefined {
  let [lo, hi] = [0, order.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyAt(order[mid]!) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < order.length && keyAt(order[lo]!) === key ? order[lo] : undefined;
}

/** The slots ordered by their keys (UTF-16 code units, as `<` compares). */
export function slotsSortedByKey(slots: Iterable<number>, keyAt: (slot: number) => string): Uint32Array {
  return Uint32Array.from(slots).sort((a, b) => (keyAt(a) < keyAt(b) ? -1 : keyAt(a) > keyAt(b) ? 1 : 0));
}
