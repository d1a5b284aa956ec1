/**
 * Matrix–vector products in WebAssembly SIMD, ~8× the fastest plain-JS loop measured on the same
 * machine. Ingest projects every entry onto the PCA components (128 × 512 multiply-adds an
 * entry), fitting the projection is a covariance and a power iteration made of the same products,
 * and stage 1 of a query scans every entry's small vector (100K × 128 at 100K entries).
 *
 * The modules are assembled below (~260 bytes each), not .wasm files: nothing is read from disk
 * and no toolchain is needed to rebuild them. Each has one function
 *
 *   dots(x, rows, k, rowBytes, out): for r < k, out[r] = Σ_i rows[r·stride + i] · x[i]
 *
 * with every argument a byte offset into the kernel's memory, and rows padded with zeros to what
 * one turn of the loop takes.
 */

import { Worker } from 'node:worker_threads';

// @types/node 20 does not declare the WebAssembly global (lib.dom does): the members used here.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
};
type WasmMemory = { readonly buffer: ArrayBuffer | SharedArrayBuffer; grow(pages: number): number };
type WasmModule = { readonly wasmModule: unique symbol };

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const vec = (items: number[][]): number[] => [...leb(items.length), ...items.flat()];
const name = (s: string): number[] => [...leb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
const section = (id: number, bytes: number[]): number[] => [id, ...leb(bytes.length), ...bytes];

const I32 = 0x7f;
const V128 = 0x7b;
// parameters, then locals
const [X, ROWS, K, ROW_BYTES, OUT, R, I, ROW, A0, A1] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
const get = (i: number) => [0x20, i];
const set = (i: number) => [0x21, i];
const i32 = (n: number) => [0x41, ...leb(n)]; // small non-negative constants: LEB equals SLEB below 64
const simd = (op: number) => [0xfd, ...leb(op)];
const load = (offset: number) => [...simd(0x00), 4, ...leb(offset)]; // v128.load align 16
const zero = [...simd(0x0c), ...new Array<number>(16).fill(0)]; // v128.const 0
const [BLOCK, LOOP, END, BR, BR_IF, I32_ADD, I32_SHL, I32_GE_U] = [[0x02, 0x40], [0x03, 0x40], [0x0b], [0x0c], [0x0d], [0x6a], [0x74], [0x4f]];

/**
 * The two kernels differ only in one turn of the inner loop and in how four lanes become a number:
 *
 * - f32: rows and x are f32; a turn multiplies and adds eight floats (32 bytes of a row) into two
 *   f32x4 accumulators; the lanes' sum is stored as f32.
 * - i8: rows are i8 and x is i16; a turn widens 32 bytes of a row to i16 and takes
 *   i32x4.dot_i16x8_s against 32 values of x (64 bytes) into two i32x4 accumulators; the lanes'
 *   sum is stored as i32 (a quarter of the memory read per row: the scan is bound by it).
 */
function assembleDots(precision: 'f32' | 'i8', shared: boolean): Uint8Array {
  const f32 = precision === 'f32';
  const [ADD, MUL, LANE] = f32 ? [simd(0xe4), simd(0xe6), simd(0x1f)] : [simd(0xae), [], simd(0x1b)]; // f32x4/i32x4 add, f32x4.mul, extract_lane
  const [DOT, WIDEN_LOW, WIDEN_HIGH] = [simd(0xba), simd(0x87), simd(0x88)]; // i32x4.dot_i16x8_s, i16x8.extend_{low,high}_i8x16_s
  const [SCALAR_ADD, STORE] = f32 ? [[0x92], [0x38, 2, 0]] : [[0x6a], [0x36, 2, 0]]; // f32.add/i32.add, f32.store/i32.store
  const rowAt = [...get(ROW), ...get(I), ...I32_ADD];
  const xAt = f32 ? [...get(X), ...get(I), ...I32_ADD] : [...get(X), ...get(I), ...i32(1), ...I32_SHL, ...I32_ADD]; // x is i16: twice the row's offset
  const turn = f32
    ? [
        ...get(A0), ...rowAt, ...load(0), ...xAt, ...load(0), ...MUL, ...ADD, ...set(A0),
        ...get(A1), ...rowAt, ...load(16), ...xAt, ...load(16), ...MUL, ...ADD, ...set(A1),
      ]
    : [
        ...get(A0), ...rowAt, ...load(0), ...WIDEN_LOW, ...xAt, ...load(0), ...DOT, ...ADD,
        ...rowAt, ...load(0), ...WIDEN_HIGH, ...xAt, ...load(16), ...DOT, ...ADD, ...set(A0),
        ...get(A1), ...rowAt, ...load(16), ...WIDEN_LOW, ...xAt, ...load(32), ...DOT, ...ADD,
        ...rowAt, ...load(16), ...WIDEN_HIGH, ...xAt, ...load(48), ...DOT, ...ADD, ...set(A1),
      ];
  const body = [
    ...get(ROWS), ...set(ROW), ...i32(0), ...set(R),
    ...BLOCK, ...LOOP, //                                     for r < k
    ...get(R), ...get(K), ...I32_GE_U, ...BR_IF, 1,
    ...zero, ...set(A0), ...zero, ...set(A1), ...i32(0), ...set(I),
    ...BLOCK, ...LOOP, //                                     for i < rowBytes, 32 bytes of the row a turn
    ...get(I), ...get(ROW_BYTES), ...I32_GE_U, ...BR_IF, 1,
    ...turn,
    ...get(I), ...i32(32), ...I32_ADD, ...set(I),
    ...BR, 0, ...END, ...END,
    ...get(A0), ...get(A1), ...ADD, ...set(A0),
    ...get(OUT), ...get(R), ...i32(2), ...I32_SHL, ...I32_ADD, // &out[r]
    ...get(A0), ...LANE, 0, ...get(A0), ...LANE, 1, ...SCALAR_ADD, ...get(A0), ...LANE, 2, ...SCALAR_ADD, ...get(A0), ...LANE, 3, ...SCALAR_ADD,
    ...STORE,
    ...get(ROW), ...get(ROW_BYTES), ...I32_ADD, ...set(ROW),
    ...get(R), ...i32(1), ...I32_ADD, ...set(R),
    ...BR, 0, ...END, ...END,
    ...END,
  ];
  const code = [...vec([[...leb(3), I32], [...leb(2), V128]]), ...body];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])), // type (i32 ×5) → ()
    // import memory e.m: limits {min 1}, or shared {min 1, max MAX_PAGES}
    ...section(2, vec([[...name('e'), ...name('m'), 0x02, ...(shared ? [0x03, 1, ...leb(MAX_PAGES)] : [0x00, 1])]])),
    ...section(3, vec([[0]])), //                                                      one function of type 0
    ...section(7, vec([[...name('dots'), 0x00, 0]])), //                               export it as dots
    ...section(10, vec([[...leb(code.length), ...code]])),
  ]);
}

/** Compiled once per precision and memory kind, instantiated per matrix (each has its own memory). */
const dotsModules = new Map<string, WasmModule>();

function dotsModule(precision: 'f32' | 'i8', shared: boolean): WasmModule {
  const key = `${precision}${shared ? ':shared' : ''}`;
  let module = dotsModules.get(key);
  if (!module) dotsModules.set(key, (module = new WebAssembly.Module(assembleDots(precision, shared))));
  return module;
}

const PAGE_BYTES = 65_536;
/** A shared memory declares its largest size up front: the most a 32-bit memory can be (4 GiB). */
const MAX_PAGES = 65_536;

/** Control words of a helper thread, in a small shared Int32Array. */
const [STATE, ARG0] = [0, 1];
const [IDLE, RUN, DONE, STOP] = [0, 1, 2, 3];
const READY_AT = ARG0 + 5;

/**
 * The helper thread's program: wait for RUN, call dots on the arguments, say DONE. Plain
 * JavaScript run with `eval`, so that it needs no file beside this module, compiled or not.
 */
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

/** The i8 products of one scan, as `products` returns them. */
export interface Products {
  sums: Int32Array;
  scales: Float32Array;
  step: number;
}

/** The arguments of the kernel's `dots`: byte offsets of x, of the first row and of the output, a row count and the row stride. */
type DotsArgs = readonly [x: number, rows: number, k: number, rowBytes: number, out: number];

/** Bytes of a row value and of an x value, and values a row is padded to a multiple of. */
const LAYOUT = { f32: { row: 4, x: 4, pad: 8 }, i8: { row: 1, x: 2, pad: 32 } } as const;

export interface MatrixKernelOptions {
  /** Rows to make room for up front. Default: `rows`. */
  capacity?: number;
  /** Default 'f32'. */
  precision?: 'f32' | 'i8';
  /**
   * i8 only: run `startProducts` on a helper thread (the memory is then shared), once the matrix
   * has at least this many rows, so that the caller can work meanwhile. Default: never.
   */
  helperMinRows?: number;
}

interface Helper {
  worker: Worker;
  control: Int32Array;
  /** Failed, exited or too slow once: not used again. */
  dead: boolean;
}

/**
 * A matrix copied once into its own WebAssembly memory, then multiplied by many vectors. Rows are
 * stored padded with zeros. Rows can be set and appended after construction (`setRow`), so a
 * matrix held in memory can follow writes.
 *
 * - `f32` (default): products summed in f32, within ~1e-6 of a float64 sum for unit-scale vectors
 *   of a few hundred dimensions.
 * - `i8`: each row quantised to −127…127 by its own scale, x to −32767…32767, products summed
 *   exactly in i32 and scaled back: within ~1% of the row's largest product term, for a quarter of
 *   the memory. For ranking many rows (a scan), not for arithmetic. With `helperMinRows` its
 *   memory is shared with a helper thread, which runs the scans `startProducts` starts.
 *
 * Memory layout, in bytes: the vector multiplied, then `capacity` rows, then one 4-byte output a
 * row. Growing moves only the output, which is scratch.
 */
export class MatrixKernel {
  private readonly stride: number;
  private readonly layout: (typeof LAYOUT)['f32' | 'i8'];
  private readonly wasmMemory: WasmMemory;
  private readonly module: WasmModule;
  private readonly dots: (x: number, rows: number, k: number, rowBytes: number, out: number) => void;
  private capacity: number;
  private rowCount: number;
  /** i8: each row's scale (value = stored × scale). */
  private rowScales: Float32Array;
  private readonly helperMinRows: number;
  /** Started on the first scan big enough; null when threads are not to be used (or could not start). */
  private helper: Helper | null | undefined;
  /** Set between startProducts and its finish, when nothing else may touch the memory. */
  private scanning = false;

  /** `matrix` holds `rows` rows of `columns` values, row after row. */
  constructor(matrix: ArrayLike<number>, rows: number, readonly columns: number, opts: MatrixKernelOptions = {}) {
    if (matrix.length !== rows * columns) throw new RangeError(`matrix has ${matrix.length} values, not ${rows} × ${columns}`);
    const precision = opts.precision ?? 'f32';
    this.layout = LAYOUT[precision];
    this.stride = Math.ceil(columns / this.layout.pad) * this.layout.pad;
    this.capacity = Math.max(rows, opts.capacity ?? rows, 1);
    this.rowScales = new Float32Array(precision === 'i8' ? this.capacity : 0);
    const initial = this.pagesFor(this.capacity);
    let memory: WasmMemory | undefined;
    if (precision === 'i8' && opts.helperMinRows !== undefined) {
      try {
        memory = new WebAssembly.Memory({ initial, maximum: MAX_PAGES, shared: true });
      } catch {
        // No room for a shared memory (it reserves its largest size): scans stay on this thread.
      }
    }
    const shared = memory !== undefined;
    this.helperMinRows = shared ? opts.helperMinRows! : Infinity;
    this.helper = shared ? undefined : null;
    this.wasmMemory = memory ?? new WebAssembly.Memory({ initial });
    this.module = dotsModule(precision, shared);
    this.dots = new WebAssembly.Instance(this.module, { e: { m: this.wasmMemory } }).exports.dots as MatrixKernel['dots'];
    this.rowCount = 0;
    for (let r = 0; r < rows; r++) this.setRow(r, matrix instanceof Float32Array ? matrix.subarray(r * columns, (r + 1) * columns) : Array.from({ length: columns }, (_, c) => matrix[r * columns + c]!));
  }

  /**
   * i8: the largest magnitude x is quantised to. 32,767 fills the i16 lanes, but past 516 columns
   * a row of 127s against an x of 32,767s would overflow the i32 sums, so wider matrices take
   * fewer levels: no product can then wrap, which the error bounds of an exact search rely on.
   */
  private get queryLevels(): number {
    return Math.min(32_767, Math.floor(0x7fff_ffff / (127 * this.columns)));
  }

  /**
   * i8 only: the rows as stored (row r's values at `r · stride`, value = stored × `scales[r]`).
   * Views into the kernel's memory, valid until a row is appended past the capacity.
   */
  quantisedRows(): { values: Int8Array; stride: number; scales: Float32Array } {
    if (!this.quantised) throw new RangeError('quantisedRows needs an i8 kernel');
    return { values: new Int8Array(this.wasmMemory.buffer, this.rowAt(0), this.capacity * this.stride), stride: this.stride, scales: this.rowScales };
  }

  /**
   * i8 only: the rows held, as stored (a copy), for a snapshot; `setQuantisedRows` takes them back
   * without quantising again.
   */
  exportQuantisedRows(): { values: Int8Array; scales: Float32Array } {
    const { values, stride, scales } = this.quantisedRows();
    return { values: values.slice(0, this.rowCount * stride), scales: scales.slice(0, this.rowCount) };
  }

  /** i8 only: replaces every row with rows as `exportQuantisedRows` gave them (of a kernel of the same columns). */
  setQuantisedRows(values: Int8Array, scales: Float32Array): void {
    this.assertIdle();
    const rows = scales.length;
    if (!this.quantised || values.length !== rows * this.stride) throw new RangeError(`${rows} quantised rows need ${rows * this.stride} values, got ${values.length}`);
    if (rows > this.capacity) {
      const pages = this.pagesFor(rows) - this.wasmMemory.buffer.byteLength / PAGE_BYTES;
      if (pages > 0) this.wasmMemory.grow(pages);
      this.capacity = rows;
      this.rowScales = new Float32Array(rows);
    }
    new Int8Array(this.wasmMemory.buffer, this.rowAt(0), values.length).set(values);
    this.rowScales.set(scales);
    this.rowCount = rows;
  }

  /** Rows held. */
  get rows(): number {
    return this.rowCount;
  }

  private get quantised(): boolean {
    return this.layout === LAYOUT.i8;
  }

  private pagesFor(capacity: number): number {
    return Math.max(1, Math.ceil((this.stride * this.layout.x + capacity * (this.stride * this.layout.row + 4)) / PAGE_BYTES));
  }

  /** Byte offset of row r (r = capacity: of the output). */
  private rowAt(r: number): number {
    return this.stride * this.layout.x + r * this.stride * this.layout.row;
  }

  /**
   * Sets row `r` to `values` times `scale`; `r` may be `rows`, which appends a row (the memory
   * grows by doubling). Rows between are not allowed: every row held is one that was set.
   */
  setRow(r: number, values: ArrayLike<number>, scale = 1): void {
    this.assertIdle();
    if (!(Number.isInteger(r) && r >= 0 && r <= this.rowCount)) throw new RangeError(`row ${r} is past the ${this.rowCount} rows held`);
    if (values.length !== this.columns) throw new RangeError(`row has ${values.length} values, the matrix ${this.columns} columns`);
    if (r === this.capacity) {
      this.capacity *= 2;
      const pages = this.pagesFor(this.capacity) - this.wasmMemory.buffer.byteLength / PAGE_BYTES;
      if (pages > 0) this.wasmMemory.grow(pages);
      if (this.quantised) {
        const scales = new Float32Array(this.capacity);
        scales.set(this.rowScales);
        this.rowScales = scales;
      }
    }
    const at = this.rowAt(r);
    if (this.quantised) {
      let max = 0;
      for (let c = 0; c < this.columns; c++) max = Math.max(max, Math.abs(values[c]! * scale));
      const step = max > 0 ? max / 127 : 1;
      const row = new Int8Array(this.wasmMemory.buffer, at, this.columns);
      for (let c = 0; c < this.columns; c++) row[c] = Math.round((values[c]! * scale) / step);
      this.rowScales[r] = step;
    } else {
      const row = new Float32Array(this.wasmMemory.buffer, at, this.columns);
      for (let c = 0; c < this.columns; c++) row[c] = values[c]! * scale;
    }
    if (r === this.rowCount) this.rowCount++;
  }

  /** The matrix times `x` (length `columns`): one value a row, into `out` (at least `rows` long). */
  apply(x: ArrayLike<number>, out: Float32Array = new Float32Array(this.rowCount)): Float32Array {
    if (x.length !== this.columns) throw new RangeError(`vector has ${x.length} values, the matrix ${this.columns} columns`);
    if (!this.quantised) {
      const into = new Float32Array(this.wasmMemory.buffer, 0, this.columns);
      if (x instanceof Float32Array) into.set(x);
      else for (let i = 0; i < this.columns; i++) into[i] = x[i]!;
      return this.run(0, out);
    }
    const { sums, scales, step } = this.products(x);
    for (let r = 0; r < this.rowCount; r++) out[r] = sums[r]! * scales[r]! * step;
    return out;
  }

  /**
   * i8 only: the matrix times `x` as the kernel leaves it, row r's value being
   * `sums[r] · scales[r] · step`, so that a scan can rank on `sums[r] · scales[r]` without first
   * writing every value out. The arrays are views, valid until the next call. With a helper
   * thread running, it takes the first half of the rows while this thread does the rest.
   */
  products(x: ArrayLike<number>): Products {
    const { step, args, products } = this.prepareProducts(x);
    const half = args[2] >> 1;
    const finish = half > 0 ? this.runOnHelper([args[0], args[1], half, args[3], args[4]]) : undefined;
    if (!finish) {
      this.dots(...args);
      return products();
    }
    this.dots(args[0], this.rowAt(half), args[2] - half, args[3], args[4] + 4 * half);
    finish();
    return products();
  }

  /**
   * `products`, started on the helper thread when there is one (see `helperMinRows`): the
   * function returned waits for them and returns them. Until it is called, the kernel refuses
   * every other call, since the helper reads the rows and writes the output: start and finish in
   * one synchronous stretch of code, with no `await` between.
   */
  startProducts(x: ArrayLike<number>): () => Products {
    const { args, products } = this.prepareProducts(x);
    const finish = this.runOnHelper(args);
    if (!finish) {
      this.dots(...args);
      return products;
    }
    return () => {
      finish();
      return products();
    };
  }

  /** Quantises `x` into the kernel's memory: the arguments of a scan of every row, and how to read its result. */
  private prepareProducts(x: ArrayLike<number>): { step: number; args: DotsArgs; products: () => Products } {
    this.assertIdle();
    if (!this.quantised) throw new RangeError('products needs an i8 kernel');
    if (x.length !== this.columns) throw new RangeError(`vector has ${x.length} values, the matrix ${this.columns} columns`);
    let max = 0;
    for (let i = 0; i < this.columns; i++) max = Math.max(max, Math.abs(x[i]!));
    const step = max > 0 ? max / this.queryLevels : 1;
    const into = new Int16Array(this.wasmMemory.buffer, 0, this.columns);
    for (let i = 0; i < this.columns; i++) into[i] = Math.round(x[i]! / step);
    const args: DotsArgs = [0, this.rowAt(0), this.rowCount, this.stride, this.rowAt(this.capacity)];
    return { step, args, products: () => ({ sums: new Int32Array(this.wasmMemory.buffer, args[4], this.rowCount), scales: this.rowScales, step }) };
  }

  /**
   * Starts `dots(...args)` on the helper thread, when one is ready: the function returned waits
   * for it (or, when the helper is stuck, does the work here and retires it). Undefined without
   * a helper: the caller runs the scan itself.
   */
  private runOnHelper(args: DotsArgs): (() => void) | undefined {
    const helper = this.readyHelper();
    if (!helper) return undefined;
    const c = helper.control;
    c.set(args, ARG0);
    Atomics.store(c, STATE, RUN);
    Atomics.notify(c, STATE);
    this.scanning = true;
    return () => {
      if (!this.scanning) return;
      this.scanning = false;
      while (Atomics.load(c, STATE) === RUN) {
        if (Atomics.wait(c, STATE, RUN, HELPER_TIMEOUT_MS) !== 'timed-out') continue;
        // Stuck or starved: do it here, and stop using the helper.
        helper.dead = true;
        void helper.worker.terminate();
        this.dots(...args);
        break;
      }
      Atomics.store(c, STATE, IDLE);
    };
  }

  /** Stops the helper thread, if one runs; later scans run on the calling thread. */
  close(): void {
    helpers.unregister(this);
    if (this.helper) {
      this.helper.dead = true;
      Atomics.store(this.helper.control, STATE, STOP);
      Atomics.notify(this.helper.control, STATE);
      void this.helper.worker.terminate();
    }
    this.helper = null;
  }

  /** The helper thread, started on the first scan big enough; undefined while it boots, or when there is none. */
  private readyHelper(): Helper | undefined {
    if (this.helper === null || this.rowCount < this.helperMinRows) return undefined;
    if (this.helper === undefined) {
      try {
        const control = new Int32Array(new SharedArrayBuffer(4 * (READY_AT + 1)));
        const worker = new Worker(HELPER_SOURCE, { eval: true, workerData: { module: this.module, memory: this.wasmMemory, control: control.buffer } });
        const helper: Helper = { worker, control, dead: false };
        // The listeners hold the helper, not the kernel: the kernel can be collected, and its helper then stopped.
        worker.on('error', () => (helper.dead = true));
        worker.on('exit', () => (helper.dead = true));
        worker.unref();
        helpers.register(this, worker, this);
        this.helper = helper;
      } catch {
        this.helper = null;
        return undefined;
      }
    }
    return this.helperRunning ? this.helper : undefined;
  }

  /** Whether scans now run on the helper thread (it has started and not failed). */
  get helperRunning(): boolean {
    return this.helper !== null && this.helper !== undefined && !this.helper.dead && Atomics.load(this.helper.control, READY_AT) === 1;
  }

  /** Throws while a scan started with startProducts has not been finished. */
  assertIdle(): void {
    if (this.scanning) throw new Error('MatrixKernel: a scan started with startProducts is still running; call its finish first');
  }

  /** The matrix times its own row `r` (a row of a Gram or covariance matrix, from the data's transpose). f32 only. */
  applyOwnRow(r: number, out: Float32Array = new Float32Array(this.rowCount)): Float32Array {
    this.assertIdle();
    if (this.quantised) throw new RangeError('applyOwnRow needs an f32 kernel');
    if (!(r >= 0 && r < this.rowCount)) throw new RangeError(`no row ${r}`);
    return this.run(this.rowAt(r), out);
  }

  private run(xAt: number, out: Float32Array): Float32Array {
    const outAt = this.rowAt(this.capacity);
    this.dots(xAt, this.rowAt(0), this.rowCount, this.stride * 4, outAt);
    out.set(new Float32Array(this.wasmMemory.buffer, outAt, this.rowCount));
    return out;
  }
}
