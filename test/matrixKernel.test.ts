import { describe, expect, it } from 'vitest';
import { MatrixKernel } from '../src/kernel/matrixKernel.js';
import { fitPca, mulberry32, project } from '../src/embed/matryoshka.js';

const random = (n: number, rand: () => number) => Float32Array.from({ length: n }, () => rand() - 0.5);

function reference(matrix: Float32Array, rows: number, columns: number, x: ArrayLike<number>): number[] {
  return Array.from({ length: rows }, (_, r) => {
    let sum = 0;
    for (let c = 0; c < columns; c++) sum += matrix[r * columns + c]! * x[c]!;
    return sum;
  });
}

describe('matrix kernel (WebAssembly SIMD)', () => {
  it('multiplies like a float64 loop, for widths that are and are not a multiple of eight', () => {
    const rand = mulberry32(3);
    for (const [rows, columns] of [
      [1, 1],
      [3, 5],
      [16, 8],
      [7, 13],
      [128, 512],
      [40, 1001],
    ] as const) {
      const matrix = random(rows * columns, rand);
      for (let t = 0; t < 3; t++) {
        const x = random(columns, rand);
        const got = new MatrixKernel(matrix, rows, columns).apply(x);
        const want = reference(matrix, rows, columns, x);
        got.forEach((v, r) => expect(v, `${rows}×${columns} row ${r}`).toBeCloseTo(want[r]!, 4));
        // a float64 input is converted on the way in
        expect(Array.from(new MatrixKernel(matrix, rows, columns).apply(Float64Array.from(x)))).toEqual(Array.from(got));
      }
    }
  });

  it('multiplies by its own rows (a Gram matrix of the transpose) and rejects wrong shapes', () => {
    const rand = mulberry32(5);
    const matrix = random(6 * 11, rand);
    const kernel = new MatrixKernel(matrix, 6, 11);
    for (let r = 0; r < 6; r++) {
      const want = reference(matrix, 6, 11, matrix.subarray(r * 11, (r + 1) * 11));
      kernel.applyOwnRow(r).forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 5));
    }
    expect(() => new MatrixKernel(matrix, 6, 10)).toThrow(/66 values, not 6 × 10/);
    expect(() => kernel.apply(new Float32Array(10))).toThrow(/10 values/);
    expect(() => kernel.applyOwnRow(6)).toThrow(/no row 6/);
  });

  it('appends and replaces rows after construction, growing its memory past the first page', () => {
    const rand = mulberry32(7);
    const columns = 100; // 104 floats a row padded: 2,000 rows span several 64 KiB pages
    const kernel = new MatrixKernel(new Float32Array(0), 0, columns, { capacity: 4 });
    const matrix = random(2_000 * columns, rand);
    for (let r = 0; r < 2_000; r++) kernel.setRow(r, matrix.subarray(r * columns, (r + 1) * columns));
    expect(kernel.rows).toBe(2_000);
    const x = random(columns, rand);
    let want = reference(matrix, 2_000, columns, x);
    kernel.apply(x).forEach((v, r) => expect(v, `row ${r}`).toBeCloseTo(want[r]!, 4));
    // replacing a row, with a scale, changes that row's product only
    const row = random(columns, rand);
    kernel.setRow(17, row, 0.5);
    matrix.set(
      row.map((v) => v * 0.5),
      17 * columns,
    );
    want = reference(matrix, 2_000, columns, x);
    kernel.apply(x).forEach((v, r) => expect(v, `row ${r}`).toBeCloseTo(want[r]!, 4));
    expect(() => kernel.setRow(2_001, row)).toThrow(/past the 2000 rows/);
    expect(() => kernel.setRow(0, row.subarray(1))).toThrow(/99 values/);
  });

  it("in 8-bit precision, gives every product within 1% of the row's scale, for widths that are and are not a multiple of 32", () => {
    const rand = mulberry32(13);
    for (const [rows, columns] of [
      [1, 1],
      [5, 31],
      [70, 32],
      [300, 100],
      [50, 200],
    ] as const) {
      const matrix = random(rows * columns, rand);
      const kernel = new MatrixKernel(matrix, rows, columns, { precision: 'i8', capacity: 2 });
      // and appended past its capacity, scaled
      const extra = random(columns, rand);
      kernel.setRow(rows, extra, 3);
      const all = new Float32Array([...matrix, ...extra.map((v) => v * 3)]);
      for (let t = 0; t < 3; t++) {
        const x = random(columns, rand);
        const want = reference(all, rows + 1, columns, x);
        kernel.apply(x).forEach((v, r) => {
          // the bound: each of `columns` terms off by at most half a step of the row and of x
          const rowMax = Math.max(...all.subarray(r * columns, (r + 1) * columns).map(Math.abs));
          const xMax = Math.max(...x.map(Math.abs));
          expect(Math.abs(v - want[r]!), `${rows}×${columns} row ${r}`).toBeLessThanOrEqual(columns * (rowMax / 254) * xMax * 1.01 + 1e-6);
        });
      }
    }
    expect(() => new MatrixKernel(new Float32Array(4), 2, 2, { precision: 'i8' }).applyOwnRow(0)).toThrow(/f32/);
    expect(() => new MatrixKernel(new Float32Array(4), 2, 2).products([1, 1])).toThrow(/i8/);
  });

  it('shares the chunks of a scan between the helper and the caller, whoever takes more', async () => {
    const rand = mulberry32(12);
    const [rows, columns] = [20_000, 40]; // 10 chunks
    const matrix = random(rows * columns, rand);
    const here = new MatrixKernel(matrix, rows, columns, { precision: 'i8' });
    const threaded = new MatrixKernel(matrix, rows, columns, { precision: 'i8', helperMinRows: 1000 });
    try {
      threaded.products(random(columns, rand));
      for (let i = 0; i < 500 && !threaded.helperRunning; i++) await new Promise((r) => setTimeout(r, 10));
      expect(threaded.helperRunning).toBe(true);
      for (let t = 0; t < 40; t++) {
        const x = random(columns, rand);
        const finish = threaded.startProducts(x);
        // The caller finishes at once (it takes most chunks), or after the helper had time for all.
        if (t % 2 === 1) await new Promise((r) => setTimeout(r, 5));
        const want = Array.from(here.products(x).sums);
        expect(Array.from(finish().sums)).toEqual(want);
        // products: the caller takes chunks at once beside the helper.
        expect(Array.from(threaded.products(x).sums)).toEqual(want);
      }
      expect(threaded.helperRunning).toBe(true);
    } finally {
      threaded.close();
    }
  });

  it('scans on a helper thread with the same products, and refuses other calls until a scan is finished', async () => {
    const rand = mulberry32(11);
    const [rows, columns] = [3000, 40];
    const matrix = random(rows * columns, rand);
    const here = new MatrixKernel(matrix, rows, columns, { precision: 'i8' });
    const threaded = new MatrixKernel(matrix, rows, columns, { precision: 'i8', helperMinRows: 1000, capacity: 4000 });
    const few = new MatrixKernel(matrix.subarray(0, 10 * columns), 10, columns, { precision: 'i8', helperMinRows: 1000 });
    try {
      // The helper boots in the background; scans run here until it is ready.
      threaded.products(random(columns, rand));
      few.products(random(columns, rand));
      for (let i = 0; i < 500 && !threaded.helperRunning; i++) await new Promise((r) => setTimeout(r, 10));
      expect(threaded.helperRunning).toBe(true);
      expect(few.helperRunning).toBe(false); // fewer rows than helperMinRows: no thread
      for (let t = 0; t < 5; t++) {
        const x = random(columns, rand);
        const finish = threaded.startProducts(x);
        // the rows and the output belong to the helper until the scan is finished
        expect(() => threaded.setRow(rows, random(columns, rand))).toThrow(/still running/);
        expect(() => threaded.startProducts(x)).toThrow(/still running/);
        const got = finish();
        const want = here.products(x);
        expect(got.step).toBe(want.step);
        expect(Array.from(got.sums)).toEqual(Array.from(want.sums));
        expect(finish().sums).toEqual(got.sums); // finishing twice is harmless
      }
      // rows appended after a scan (the memory grows past its first size) are scanned too
      for (let r = rows; r < 5000; r++) {
        const row = random(columns, rand);
        threaded.setRow(r, row);
        here.setRow(r, row);
      }
      const x = random(columns, rand);
      expect(Array.from(threaded.startProducts(x)().sums)).toEqual(Array.from(here.products(x).sums));
      threaded.close();
      expect(threaded.helperRunning).toBe(false);
      expect(Array.from(threaded.products(x).sums)).toEqual(Array.from(here.products(x).sums)); // on this thread after close
    } finally {
      threaded.close();
    }
  });

  it('fits a PCA that finds the subspace the data varies in, and projects onto it', () => {
    // 64-d data that varies along 4 directions only (plus tiny noise): the fitted 4-d projection keeps every cosine
    const rand = mulberry32(9);
    const basis = Array.from({ length: 4 }, () => random(64, rand));
    const data = Array.from({ length: 300 }, () => {
      const w = random(4, rand);
      return Float32Array.from({ length: 64 }, (_, i) => basis.reduce((s, b, j) => s + w[j]! * b[i]!, 0) + (rand() - 0.5) * 1e-4);
    });
    const projection = fitPca(data, 4);
    const mean = projection.kind === 'pca' ? projection.mean : [];
    const centred = (v: Float32Array) => Float32Array.from(v, (x, i) => x - mean[i]!);
    const cos = (a: ArrayLike<number>, b: ArrayLike<number>) => {
      let d = 0,
        na = 0,
        nb = 0;
      for (let i = 0; i < a.length; i++) {
        d += a[i]! * b[i]!;
        na += a[i]! ** 2;
        nb += b[i]! ** 2;
      }
      return d / Math.sqrt(na * nb);
    };
    for (let i = 0; i < 20; i++) {
      const [a, b] = [data[i]!, data[i + 20]!];
      expect(cos(project(a, projection), project(b, projection))).toBeCloseTo(cos(centred(a), centred(b)), 3);
    }
  });
});
