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
