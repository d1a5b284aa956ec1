/**
 * How an engine's calls share its folder: writes run one at a time, each after the one before;
 * reads run freely, except while the folder itself is being swapped (reembed), which waits for
 * the reads in flight and holds new ones at the gate until it is done.
 */
import type { Embedder } from '../embed/embedder.js';

/** A write queued with others (AccessGate.grouped): its work, and how to answer its caller. */
export interface QueuedWrite {
  work: () => Promise<unknown>;
  /** The texts the write will embed, when known before it runs: its group embeds them in one call. */
  texts?: readonly string[];
  /** Their vectors, embedded by `model` from the moment the write was queued, while it waits for its turn. */
  embedding?: EarlyEmbedding;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** A write's texts being embedded ahead (undefined if that failed: its group embeds them then). */
export interface EarlyEmbedding {
  model: Embedder;
  vectors: Promise<Float32Array[] | undefined>;
}

export class AccessGate {
  /** Writes run one at a time: each waits for the one before it. */
  private writeQueue: Promise<unknown> = Promise.resolve();
  private readsInFlight = 0;
  private swapGate: Promise<void> | undefined;
  private readsDrained: (() => void) | undefined;

  /** Settles once the last write queued ahead of reads (`grouped` with aheadOfReads) and every write before it are done. */
  private aheadOfReads: Promise<unknown> | undefined;

  /**
   * Enters a read (released when the returned value is disposed): never while the folder is being
   * swapped, and after the writes queued ahead of reads before it came (a remember, a forget).
   * Those are short, and on a busy server every step of one waited behind the queries that kept
   * the one thread busy (bench:load, 8 clients at a load of ~13: remember p50 2.8 s): a query that arrives now
   * waits for them instead, and sees them (read-your-writes). Only writes queued before the read
   * count, so reads are never starved.
   */
  async reading(): Promise<Disposable> {
    const writesFirst = this.aheadOfReads;
    if (writesFirst) await writesFirst;
    while (this.swapGate) await this.swapGate;
    this.readsInFlight++;
    return { [Symbol.dispose]: () => void (--this.readsInFlight === 0 && this.readsDrained?.()) };
  }

  /** The writes waiting to run together (`grouped`), until their turn comes. */
  private waiting: QueuedWrite[] | undefined;

  /** Runs `work` after every write queued before it; a failed write does not stop the next. */
  serialized<T>(work: () => Promise<T>): Promise<T> {
    this.waiting = undefined; // writes queued after this one wait for it
    return this.inTurn(work);
  }

  /**
   * Queues `work` with the other grouped writes that arrive before their turn comes (while the
   * write before them runs): `runGroup` then runs them all, in the order they came, in one turn.
   */
  grouped<T>(
    work: () => Promise<T>,
    runGroup: (writes: QueuedWrite[]) => Promise<void>,
    texts?: readonly string[],
    opts: { aheadOfReads?: boolean; embedding?: EarlyEmbedding } = {},
  ): Promise<T> {
    const done = this.queueGrouped(work, runGroup, texts, opts.embedding);
    if (opts.aheadOfReads) {
      // The reads held for it go on at the loop's next turn, not in the microtasks that carry the
      // write's answer to its caller: resumed at once, each ran its query's embedding (~15 ms of
      // the thread) first, and a served remember's answer reached its transport ~60 ms later
      // (bench:load --trace, 8 clients).
      const settled: Promise<unknown> = done
        .then(
          () => undefined,
          () => undefined,
        )
        .then(() => new Promise<void>((resolve) => setImmediate(resolve)));
      this.aheadOfReads = settled;
      void settled.then(() => this.aheadOfReads === settled && (this.aheadOfReads = undefined));
    }
    return done;
  }

  private queueGrouped<T>(
    work: () => Promise<T>,
    runGroup: (writes: QueuedWrite[]) => Promise<void>,
    texts?: readonly string[],
    embedding?: EarlyEmbedding,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const write: QueuedWrite = {
        work,
        resolve: resolve as (value: unknown) => void,
        reject,
        ...(texts ? { texts } : {}),
        ...(embedding ? { embedding } : {}),
      };
      if (this.waiting) {
        this.waiting.push(write);
        return;
      }
      const group = (this.waiting = [write]);
      void this.inTurn(async () => {
        if (this.waiting === group) this.waiting = undefined;
        await runGroup(group);
      });
    });
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writeQueue.then(work, work);
    this.writeQueue = run.catch(() => undefined);
    return run;
  }

  /** Resolves once the writes queued so far are done. */
  async writesDone(): Promise<void> {
    await this.writeQueue;
  }

  /** Runs `swap` with no read in flight and new reads waiting until it is done. */
  async withReadsHeld<T>(swap: () => Promise<T>): Promise<T> {
    let open!: () => void;
    this.swapGate = new Promise<void>((resolve) => (open = resolve));
    try {
      if (this.readsInFlight > 0) await new Promise<void>((resolve) => (this.readsDrained = resolve));
      return await swap();
    } finally {
      this.readsDrained = undefined;
      this.swapGate = undefined;
      open();
    }
  }
}
