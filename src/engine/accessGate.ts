/**
 * How an engine's calls share its folder: writes run one at a time, each after the one before;
 * reads run freely, except while the folder itself is being swapped (reembed), which waits for
 * the reads in flight and holds new ones at the gate until it is done.
 */
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

  /** Runs `work` after every write queued before it; a failed write does not stop the next. */
  serialized<T>(work: () => Promise<T>): Promise<T> {
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
