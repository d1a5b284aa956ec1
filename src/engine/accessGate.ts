/**
 * How an engine's calls share its folder: writes run one at a time, each after the one before;
 * reads run freely, except while the folder itself is being swapped (reembed), which waits for
 * the reads in flight and holds new ones at the gate until it is done.
 */
/** A write queued with others (AccessGate.grouped): its work, and how to answer its caller. */
export interface QueuedWrite {
  work: () => Promise<unknown>;
  /** The texts the write will embed, when known before it runs: its group embeds them in one call. */
  texts?: readonly string[];
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class AccessGate {
  /** Writes run one at a time: each waits for the one before it. */
  private writeQueue: Promise<unknown> = Promise.resolve();
  private readsInFlight = 0;
  private swapGate: Promise<void> | undefined;
  private readsDrained: (() => void) | undefined;

  /** Enters a read (released when the returned value is disposed): never while the folder is being swapped. */
  async reading(): Promise<Disposable> {
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
  grouped<T>(work: () => Promise<T>, runGroup: (writes: QueuedWrite[]) => Promise<void>, texts?: readonly string[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const write: QueuedWrite = { work, resolve: resolve as (value: unknown) => void, reject, ...(texts ? { texts } : {}) };
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
