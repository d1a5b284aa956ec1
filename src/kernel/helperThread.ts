/**
 * A helper thread that runs a kernel's `dots` on the kernel's shared memory while the calling
 * thread works: the caller starts a scan, does other work, then waits for it. The protocol is a
 * few words of a shared Int32Array; the thread's program is plain JavaScript run with `eval`,
 * so that it needs no file beside this module, compiled or not.
 */
import { Worker } from 'node:worker_threads';
import type { WasmMemory, WasmModule } from './assembleDots.js';

/** The arguments of `dots`: byte offsets of x, of the first row and of the output, a row count and the row stride. */
export type DotsArgs = readonly [x: number, rows: number, k: number, rowBytes: number, out: number];

/**
 * Control words, in a small shared Int32Array. A scan is cut into chunks of rows, which the helper
 * and the caller (once its own work is done) take in turn: NEXT holds the scan's number (15 bits)
 * and the next chunk to take (16 bits), taken by compare-and-swap, so that a helper late for one
 * scan takes nothing of the next; FINISHED counts the chunks done; DONE_SCAN is the last scan the
 * helper is through with: the next scan's arguments are written only then.
 */
const [STATE, ARG0] = [0, 1];
const STOP = 3;
const READY_AT = ARG0 + 5;
const [NEXT, FINISHED, CHUNK_ROWS, DONE_SCAN] = [READY_AT + 1, READY_AT + 2, READY_AT + 3, READY_AT + 4];
const CONTROL_WORDS = DONE_SCAN + 1;

/** Chunks a scan is cut into, at most (of at least MIN_CHUNK_ROWS rows). */
const CHUNKS = 64;
const MIN_CHUNK_ROWS = 2048;

/** The thread's program: wait for a new scan, take its chunks until none is left. */
const HELPER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { module, memory, control } = workerData;
const dots = new WebAssembly.Instance(module, { e: { m: memory } }).exports.dots;
const c = new Int32Array(control);
Atomics.store(c, ${READY_AT}, 1);
let lastScan = 0;
for (;;) {
  if (Atomics.load(c, ${STATE}) === ${STOP}) break;
  const next = Atomics.load(c, ${NEXT});
  const scan = next >>> 16;
  if (scan === lastScan) {
    Atomics.wait(c, ${NEXT}, next);
    continue;
  }
  lastScan = scan;
  const x = c[${ARG0}], rows = c[${ARG0 + 1}], k = c[${ARG0 + 2}], rowBytes = c[${ARG0 + 3}], out = c[${ARG0 + 4}];
  const chunk = c[${CHUNK_ROWS}];
  for (;;) {
    const at = Atomics.load(c, ${NEXT});
    if (at >>> 16 !== scan) break;
    const first = (at & 0xffff) * chunk;
    if (first >= k) break;
    if (Atomics.compareExchange(c, ${NEXT}, at, at + 1) !== at) continue;
    dots(x, rows + first * rowBytes, Math.min(chunk, k - first), rowBytes, out + 4 * first);
    Atomics.add(c, ${FINISHED}, 1);
    Atomics.notify(c, ${FINISHED});
  }
  Atomics.store(c, ${DONE_SCAN}, scan);
  Atomics.notify(c, ${DONE_SCAN});
}
`;

/** How long a scan waits for its helper before doing the work itself (the helper is then not used again). */
const HELPER_TIMEOUT_MS = 5_000;

/** Terminates a kernel's helper thread once the kernel is collected. */
const helpers = new FinalizationRegistry<Worker>((worker) => void worker.terminate());

export class HelperThread {
  /** Failed, exited or too slow once: not used again. */
  private dead = false;
  /** The number of the last scan started (NEXT's upper bits), 1 … 2^15 − 1. */
  private scan = 0;

  private constructor(
    private readonly worker: Worker,
    private readonly control: Int32Array,
  ) {}

  /**
   * Starts a thread on `module` over `memory` (shared), stopped when `owner` is collected; null
   * when no thread can start. It is not ready at once: see `ready`.
   */
  static start(owner: object, module: WasmModule, memory: WasmMemory): HelperThread | null {
    try {
      const control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_WORDS));
      const worker = new Worker(HELPER_SOURCE, { eval: true, workerData: { module, memory, control: control.buffer } });
      const helper = new HelperThread(worker, control);
      // The listeners hold the helper, not its owner: the owner can be collected, and its helper then stopped.
      worker.on('error', () => (helper.dead = true));
      worker.on('exit', () => (helper.dead = true));
      worker.unref();
      helpers.register(owner, worker, owner);
      return helper;
    } catch {
      return null;
    }
  }

  /** Whether scans can run on it now: it has started and not failed. */
  get ready(): boolean {
    return !this.dead && Atomics.load(this.control, READY_AT) === 1;
  }

  /**
   * Starts `dots(...args)` on the thread, in chunks; the function returned takes the chunks left
   * on the calling thread (with `dots`, the same function over the same memory), then waits for
   * the helper's last one. The output is the same whoever computes a chunk. When the thread is
   * stuck past the timeout, the whole scan is done on the calling thread and the helper retires.
   */
  run(args: DotsArgs, dots: (...args: DotsArgs) => void): () => void {
    const c = this.control;
    // The helper may still be reading the last scan's arguments (it woke after this thread had
    // taken every chunk): wait until it is through with it, which it almost always already is.
    for (let done = Atomics.load(c, DONE_SCAN); done !== this.scan; done = Atomics.load(c, DONE_SCAN)) {
      if (this.dead || Atomics.wait(c, DONE_SCAN, done, HELPER_TIMEOUT_MS) === 'timed-out') return this.retire(() => dots(...args));
    }
    const [x, rows, k, rowBytes, out] = args;
    const chunk = Math.max(MIN_CHUNK_ROWS, Math.ceil(k / CHUNKS));
    const chunks = Math.ceil(k / chunk);
    this.scan = (this.scan % 0x7fff) + 1;
    const scan = this.scan;
    c.set(args, ARG0);
    c[CHUNK_ROWS] = chunk;
    Atomics.store(c, FINISHED, 0);
    Atomics.store(c, NEXT, scan << 16);
    Atomics.notify(c, NEXT);
    return () => {
      for (;;) {
        const at = Atomics.load(c, NEXT);
        const first = (at & 0xffff) * chunk;
        if (first >= k) break;
        if (Atomics.compareExchange(c, NEXT, at, at + 1) !== at) continue;
        dots(x, rows + first * rowBytes, Math.min(chunk, k - first), rowBytes, out + 4 * first);
        Atomics.add(c, FINISHED, 1);
      }
      const waitedFrom = Date.now();
      for (let done = Atomics.load(c, FINISHED); done < chunks; done = Atomics.load(c, FINISHED)) {
        if (Atomics.wait(c, FINISHED, done, HELPER_TIMEOUT_MS) !== 'timed-out' || Date.now() - waitedFrom < HELPER_TIMEOUT_MS) continue;
        // Stuck or starved: do it all here, and stop using the helper.
        this.retire(() => dots(...args))();
        break;
      }
    };
  }

  /** Stops using the helper; `work`, the scan, is then the caller's. */
  private retire(work: () => void): () => void {
    this.dead = true;
    void this.worker.terminate();
    return work;
  }

  /** Stops the thread; `owner` is the object it was started for. */
  stop(owner: object): void {
    helpers.unregister(owner);
    this.dead = true;
    Atomics.store(this.control, STATE, STOP);
    Atomics.notify(this.control, NEXT);
    void this.worker.terminate();
  }
}
