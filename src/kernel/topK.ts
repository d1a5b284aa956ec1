/**
 * The `k` best of many offered items (slot numbers) by a numeric score, ties broken by
 * `tieWorse(a, b)` (a strict order: a ranks below b at equal scores): a min-heap whose root is the
 * worst kept. A scan checks an item's score against the root's (`worstScore`) before it offers
 * it, so an item that does not make it costs one comparison; the BM25 search and the stage-1
 * vector scan both select this way. Scores are kept beside the items so that comparing two is
 * arithmetic: the tie-break, a call, is reached only on equal scores.
 */
export class TopK {
  private readonly items: Int32Array;
  private readonly scores: Float64Array;
  private size = 0;

  constructor(
    readonly k: number,
    private readonly tieWorse: (a: number, b: number) => boolean,
  ) {
    this.items = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  get full(): boolean {
    return this.size === this.k;
  }

  /** The score of the worst item kept (meaningful once something is kept). */
  get worstScore(): number {
    return this.scores[0]!;
  }

  /** Whether (item a, score sa) ranks below (item b, score sb). */
  private worse(a: number, sa: number, b: number, sb: number): boolean {
    return sa < sb || (sa === sb && this.tieWorse(a, b));
  }

  /** Keeps `item` when there is room or it beats the worst kept; says whether it was kept. */
  offer(item: number, score: number): boolean {
    const { items, scores } = this;
    let at: number;
    if (this.size < this.k) {
      for (at = this.size++; at > 0;) {
        const parent = (at - 1) >> 1;
        if (!this.worse(item, score, items[parent]!, scores[parent]!)) break;
        items[at] = items[parent]!;
        scores[at] = scores[parent]!;
        at = parent;
      }
    } else {
      if (this.k === 0 || !this.worse(items[0]!, scores[0]!, item, score)) return false;
      for (at = 0; ;) {
        let child = 2 * at + 1;
        if (child >= this.size) break;
        if (child + 1 < this.size && this.worse(items[child + 1]!, scores[child + 1]!, items[child]!, scores[child]!)) child++;
        if (!this.worse(items[child]!, scores[child]!, item, score)) break;
        items[at] = items[child]!;
        scores[at] = scores[child]!;
        at = child;
      }
    }
    items[at] = item;
    scores[at] = score;
    return true;
  }

  /** Forgets every item kept. */
  clear(): void {
    this.size = 0;
  }

  /** The items kept, best first. */
  sorted(): number[] {
    const order = Array.from({ length: this.size }, (_, i) => i);
    order.sort((i, j) =>
      this.worse(this.items[i]!, this.scores[i]!, this.items[j]!, this.scores[j]!)
        ? 1
        : this.worse(this.items[j]!, this.scores[j]!, this.items[i]!, this.scores[i]!)
          ? -1
          : 0,
    );
    return order.map((i) => this.items[i]!);
  }
}

/** The `k`-th best lower bound (cosine − bound) of `items`; −∞ when there are fewer. */
export function kthLowerBound(items: readonly { cosine: number; bound: number }[], k: number): number {
  if (items.length < k) return -Infinity;
  return items.map((r) => r.cosine - r.bound).sort((a, b) => b - a)[k - 1]!;
}
