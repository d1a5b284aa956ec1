/**
 * The `k` best of many offered items (slot numbers), by `worse` (a strict order: `worse(a, b)`
 * when a ranks below b): a min-heap whose root is the worst kept. A scan checks its cheap score
 * against the root's (`worst`) before it offers anything, so an item that does not make it costs
 * one comparison; the BM25 search and the stage-1 vector scan both select this way.
 */
export class TopK {
  private readonly heap: Int32Array;
  private size = 0;

  constructor(readonly k: number, private readonly worse: (a: number, b: number) => boolean) {
    this.heap = new Int32Array(k);
  }

  get full(): boolean {
    return this.size === this.k;
  }

  /** The worst item kept (meaningful once something is kept). */
  get worst(): number {
    return this.heap[0]!;
  }

  /** Keeps `item` when there is room or it beats the worst kept; says whether it was kept. */
  offer(item: number): boolean {
    const heap = this.heap;
    let at: number;
    if (this.size < this.k) {
      for (at = this.size++; at > 0 && this.worse(item, heap[(at - 1) >> 1]!); at = (at - 1) >> 1) heap[at] = heap[(at - 1) >> 1]!;
    } else {
      if (this.k === 0 || !this.worse(heap[0]!, item)) return false;
      for (at = 0; ;) {
        let child = 2 * at + 1;
        if (child >= this.size) break;
        if (child + 1 < this.size && this.worse(heap[child + 1]!, heap[child]!)) child++;
        if (!this.worse(heap[child]!, item)) break;
        heap[at] = heap[child]!;
        at = child;
      }
    }
    heap[at] = item;
    return true;
  }

  /** The items kept, best first. */
  sorted(): number[] {
    return Array.from(this.heap.subarray(0, this.size)).sort((a, b) => (this.worse(a, b) ? 1 : this.worse(b, a) ? -1 : 0));
  }
}
