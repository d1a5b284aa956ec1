/**
 * Matrix–vector products in WebAssembly SIMD, ~8× the fastest plain-JS loop measured on the same
 * machine. Ingest projects every entry onto the PCA components (128 × 512 multiply-adds an
 * entry), fitting the projection is a covariance and a power iteration made of the same products,
 * and stage 1 of a query scans every entry's small vector (100K × 128 at 100K entries). The
 * modules are assembled in assembleDots.ts; scans can run on a helper thread (helperThread.ts).
 */
import { dotsModule, instantiateDots, kernelMemory, PAGE_BYTES, type Dots, type WasmMemory, type WasmModule } from './assembleDots.js';
import { HelperThread, type DotsArgs } from './helperThread.js';
import { quantizeI8 } from './quantize.js';

/** The i8 products of one scan, as `products` returns them. */
export interface Products {
  sums: Int32Array;
  scales: Float32Array;
  step: number;
}

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
  private readonly dots: Dots;
  private capacity: number;
  private rowCount: number;
  /** i8: each row's scale (value = stored × scale). */
  private rowScales: Float32Array;
  private readonly helperMinRows: number;
  /** Started on the first scan big enough; null when threads are not to be used (or could not start). */
  private helper: HelperThread | null | undefined;
  /** Set between startProducts and its finish, when nothing else may touch the memory. */
  private scanning = false;

  /** `matrix` holds `rows` rows of `columns` values, row after row. */
  constructor(
    matrix: ArrayLike<number>,
    rows: number,
    readonly columns: number,
    opts: MatrixKernelOptions = {},
  ) {
    if (matrix.length !== rows * columns) throw new RangeError(`matrix has ${matrix.length} values, not ${rows} × ${columns}`);
    const precision = opts.precision ?? 'f32';
    this.layout = LAYOUT[precision];
    this.stride = Math.ceil(columns / this.layout.pad) * this.layout.pad;
    this.capacity = Math.max(rows, opts.capacity ?? rows, 1);
    this.rowScales = new Float32Array(precision === 'i8' ? this.capacity : 0);
    const initial = this.pagesFor(this.capacity);
    const memory = precision === 'i8' && opts.helperMinRows !== undefined ? kernelMemory(initial, true) : undefined;
    // Without a shared memory (no room for one: it reserves its largest size) scans stay on this thread.
    const shared = memory !== undefined;
    this.helperMinRows = shared ? opts.helperMinRows! : Infinity;
    this.helper = shared ? undefined : null;
    this.wasmMemory = memory ?? kernelMemory(initial, false)!;
    this.module = dotsModule(precision, shared);
    this.dots = instantiateDots(this.module, this.wasmMemory);
    this.rowCount = 0;
    for (let r = 0; r < rows; r++)
      this.setRow(
        r,
        matrix instanceof Float32Array
          ? matrix.subarray(r * columns, (r + 1) * columns)
          : Array.from({ length: columns }, (_, c) => matrix[r * columns + c]!),
      );
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
    return {
      values: new Int8Array(this.wasmMemory.buffer, this.rowAt(0), this.capacity * this.stride),
      stride: this.stride,
      scales: this.rowScales,
    };
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
    if (!this.quantised || values.length !== rows * this.stride)
      throw new RangeError(`${rows} quantised rows need ${rows * this.stride} values, got ${values.length}`);
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
      this.rowScales[r] = quantizeI8(values, this.columns, new Int8Array(this.wasmMemory.buffer, at, this.columns), 0, scale);
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
   * thread running, the two take the rows' chunks in turn.
   */
  products(x: ArrayLike<number>): Products {
    const { args, products } = this.prepareProducts(x);
    const finish = this.runOnHelper(args);
    if (finish) finish();
    else this.dots(...args);
    return products();
  }

  /**
   * `products`, started on the helper thread when there is one (see `helperMinRows`): the
   * function returned takes what the helper has not yet begun, waits for the rest and returns them. Until it is called, the kernel refuses
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
    return {
      step,
      args,
      products: () => ({ sums: new Int32Array(this.wasmMemory.buffer, args[4], this.rowCount), scales: this.rowScales, step }),
    };
  }

  /**
   * Starts `dots(...args)` on the helper thread, when one is ready: the function returned waits
   * for it (or, when the helper is stuck, does the work here and retires it). Undefined without
   * a helper: the caller runs the scan itself.
   */
  private runOnHelper(args: DotsArgs): (() => void) | undefined {
    const helper = this.readyHelper();
    if (!helper) return undefined;
    const finish = helper.run(args, (...chunk) => this.dots(...chunk));
    this.scanning = true;
    return () => {
      if (!this.scanning) return;
      this.scanning = false;
      finish();
    };
  }

  /** Stops the helper thread, if one runs; later scans run on the calling thread. */
  close(): void {
    this.helper?.stop(this);
    this.helper = null;
  }

  /** The helper thread, started on the first scan big enough; undefined while it boots, or when there is none. */
  private readyHelper(): HelperThread | undefined {
    if (this.helper === null || this.rowCount < this.helperMinRows) return undefined;
    if (this.helper === undefined) this.helper = HelperThread.start(this, this.module, this.wasmMemory);
    return this.helper?.ready ? this.helper : undefined;
  }

  /** Whether scans now run on the helper thread (it has started and not failed). */
  get helperRunning(): boolean {
    return this.helper?.ready === true;
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
