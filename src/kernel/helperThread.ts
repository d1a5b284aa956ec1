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

/** Control words, in a small shared Int32Array. */
const [STATE, ARG0] = [0, 1];
const [IDLE, RUN, DONE, STOP] = [0, 1, 2, 3];
const READY_AT = ARG0 + 5;

/** The thread's program: wait for RUN, call dots on the arguments, say DONE. */
const HELPER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { module, memory, control } = workerData;
const dots = new WebAssembly.Instance(module, { e: { m: memory } }).exports.dots;
const c = new Int32Array(control);
Atomics.store(c, ${READY_AT}, 1);
for (;;) {
  Atomics.wait(c, ${STATE}, ${IDLE});
  const state = Atomics.load(c, ${STATE});
  if (state === ${STOP}) break;
  if (state !== ${RUN}) continue;
  dots(c[${ARG0}], c[${ARG0 + 1}], c[${ARG0 + 2}], c[${ARG0 + 3}], c[${ARG0 + 4}]);
  Atomics.store(c, ${STATE}, ${DONE});
  Atomics.notify(c, ${STATE});
}
`;

/** How long a scan waits for its helper before doing the work itself (the helper is then not used again). */
const HELPER_TIMEOUT_MS = 5_000;

/** Terminates a kernel's helper thread once the kernel is collected. */
const helpers = new FinalizationRegistry<Worker>((worker) => void worker.terminate());

export class HelperThread {
  /** Failed, exited or too slow once: not used again. */
  private dead = false;

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
      const control = new Int32Array(new SharedArrayBuffer(4 * (READY_AT + 1)));
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
   * Starts `dots(...args)` on the thread; the function returned waits for it. When the thread is
   * stuck past the timeout, `fallback` does the work on the calling thread and the helper retires.
   */
  run(args: DotsArgs, fallback: () => void): () => void {
    const c = this.control;
    c.set(args, ARG0);
    Atomics.store(c, STATE, RUN);
    Atomics.notify(c, STATE);
    return () => {
      while (Atomics.load(c, STATE) === RUN) {
        if (Atomics.wait(c, STATE, RUN, HELPER_TIMEOUT_MS) !== 'timed-out') continue;
        // Stuck or starved: do it here, and stop using the helper.
        this.dead = true;
        void this.worker.terminate();
        fallback();
        break;
      }
      Atomics.store(c, STATE, IDLE);
    };
  }

  /** Stops the thread; `owner` is the object it was started for. */
  stop(owner: object): void {
    helpers.unregister(owner);
    this.dead = true;
    Atomics.store(this.control, STATE, STOP);
    Atomics.notify(this.control, STATE);
    void this.worker.terminate();
  }
}
