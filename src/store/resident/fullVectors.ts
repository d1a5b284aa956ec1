import { norm } from '../../embed/embedder.js';
import { MatrixKernel } from '../../kernel/matrixKernel.js';
import { quantizeI8 } from '../../kernel/quantize.js';
import { grown } from './grown.js';
import type { PositionedSection } from '../snapshot/snapshotFile.js';
import { TopK, kthLowerBound } from '../../kernel/topK.js';

/**
 * Added to every error bound below: covers the floating-point rounding of the bounds' own
 * arithmetic and of the cosine an exact search reports (float64 sums of float32 values), which
 * is ~1e-15 of a cosine; far below any gap the bounds leave.
 */
const ROUNDING_SLACK = 1e-9;

/** See FullVectors.exactCandidates. */
export interface ExactCandidates {
  candidates: { slot: number; cosine: number; bound: number }[];
  floor: number;
}

/** The residual level, held while exact search runs from memory (see `exact`). */
interface Residuals {
  /**
   * v − v̂ of each slot quantised to −127…127 by `scales[slot]`, `dimensions` a slot: in memory, or
   * left in a snapshot file (read a few rows a search, see `installResiduals`) until a write.
   */
  values: Int8Array | PositionedSection;
  scales: Float32Array;
  /** ‖v − v̂ − r̂‖: what the two levels together still miss. */
  errors: Float64Array;
}

/**
 * Every entry's full vector in 8 bits, slot by slot, in a WebAssembly kernel that scans them all
 * (SIMD), and optionally a second 8-bit level, the quantised residual, for exact search.
 *
 * Exact search without holding floats (4 bytes a dimension): a scan of the first level gives each
 * slot a cosine and a bound on its error, ‖x‖·‖v − v̂‖ + ‖v̂‖·‖x − x̂‖ over the norms (Cauchy–Schwarz
 * on each quantisation), ~0.01 for unit vectors of 512 dimensions. Every slot whose upper bound
 * reaches the k-th best lower bound is kept; those few hundred are rescored on both levels, with
 * the float query, whose error bound ‖x‖·‖v − v̂ − r̂‖ is ~1e-4; what still reaches the k-th best
 * lower bound is a superset of the true top k, typically k and one or two more, whose float
 * vectors the caller reads to rank exactly (see exactNearest in retrieve/vectorCandidates).
 */
export class FullVectors {
  private readonly kernel: MatrixKernel;
  /** ‖v̂‖ of each slot, with its scale taken in float64 as the quantising did. */
  private norms = new Float32Array(16);
  /** ‖v‖, the float vector's own norm; 0 for a zero vector, which has no cosine. */
  private exactNorms = new Float64Array(16);
  /**
   * Per slot, the first level's terms over ‖v‖, so that the scan computes a cosine and its bound
   * with two multiply-adds: its scale (v̂ = stored × scale), ‖v − v̂‖ and ‖v̂‖, each ÷ ‖v‖.
   * Zero for a zero vector, which the scan skips.
   */
  private scaleOverLength = new Float64Array(16);
  private errorOverLength = new Float64Array(16);
  private normOverLength = new Float64Array(16);
  private residuals: Residuals | undefined;
  /** The residual level is on its way (a snapshot hands it over after the rest): see `installResiduals`. */
  private residualsLater = false;

  /** With `helperMinRows`, a scan of at least that many rows is split with a helper thread (MatrixKernel.products). */
  constructor(
    readonly dimensions: number,
    capacity: number,
    opts: { residuals: boolean; helperMinRows?: number },
  ) {
    this.kernel = new MatrixKernel(new Float32Array(0), 0, dimensions, {
      capacity,
      precision: 'i8',
      helperMinRows: opts.residuals ? opts.helperMinRows : undefined,
    });
    if (opts.residuals)
      this.residuals = { values: new Int8Array(16 * dimensions), scales: new Float32Array(16), errors: new Float64Array(16) };
  }

  /** Whether the residual level is held: `exactCandidates` answers only then. */
  get exact(): boolean {
    return this.residuals !== undefined || this.residualsLater;
  }

  /** Where the residual level is: in memory, left in its snapshot file, or not (yet) held. */
  get residualsHeld(): 'memory' | 'file' | undefined {
    if (!this.residuals) return undefined;
    return this.residuals.values instanceof Int8Array ? 'memory' : 'file';
  }

  /** Stops holding the residual level (its memory goes); exact search then falls back to LanceDB. */
  dropResiduals(): void {
    this.residuals = undefined;
    this.residualsLater = false;
  }

  /**
   * The residual level `restore` was told would come later (no write may come between): its
   * values whole, or left in the snapshot file, in which case a later call may bring them whole.
   */
  installResiduals(held: { residualValues: Int8Array | PositionedSection; residualScales: unknown; residualErrors: unknown }): void {
    const inFile = this.residuals !== undefined && !(this.residuals.values instanceof Int8Array);
    if (!this.residualsLater && !inFile) return;
    this.residualsLater = false;
    this.residuals = {
      values: held.residualValues,
      scales: held.residualScales as Float32Array<ArrayBuffer>,
      errors: held.residualErrors as Float64Array<ArrayBuffer>,
    };
  }

  /** Every slot as held, for a snapshot (copies): `restore` takes it back without quantising again. */
  snapshot(): Record<string, Int8Array | Float32Array | Float64Array> {
    const n = this.kernel.rows;
    const { values, scales } = this.kernel.exportQuantisedRows();
    const held = {
      values,
      scales,
      norms: this.norms.slice(0, n),
      exactNorms: this.exactNorms.slice(0, n),
      scaleOverLength: this.scaleOverLength.slice(0, n),
      errorOverLength: this.errorOverLength.slice(0, n),
      normOverLength: this.normOverLength.slice(0, n),
    };
    const r = this.wholeResiduals();
    return r
      ? {
          ...held,
          residualValues: r.values.slice(0, n * this.dimensions),
          residualScales: r.scales.slice(0, n),
          residualErrors: r.errors.slice(0, n),
        }
      : held;
  }

  /**
   * Takes back what `snapshot` gave, replacing every slot; the arrays become this instance's own
   * (as a snapshot file's reader hands them over). The residual level comes back where this
   * instance holds one (the snapshot must then have it).
   */
  restore(held: Record<string, ArrayLike<number> | undefined>, opts: { residualsLater?: boolean } = {}): void {
    const f64 = (name: string) => held[name] as Float64Array<ArrayBuffer>;
    this.kernel.setQuantisedRows(held.values as Int8Array, held.scales as Float32Array);
    this.norms = held.norms as Float32Array<ArrayBuffer>;
    this.exactNorms = f64('exactNorms');
    this.scaleOverLength = f64('scaleOverLength');
    this.errorOverLength = f64('errorOverLength');
    this.normOverLength = f64('normOverLength');
    if (this.residuals && opts.residualsLater) {
      this.residuals = undefined;
      this.residualsLater = true;
    } else if (this.residuals)
      this.residuals = {
        values: held.residualValues as Int8Array<ArrayBuffer>,
        scales: held.residualScales as Float32Array<ArrayBuffer>,
        errors: f64('residualErrors'),
      };
  }

  /** Sets slot `slot` (at most one past the last set) to `vector`. */
  set(slot: number, vector: Float32Array): void {
    const { dimensions } = this;
    this.kernel.setRow(slot, vector);
    this.norms = grown(this.norms, slot + 1, (n) => new Float32Array(n));
    this.exactNorms = grown(this.exactNorms, slot + 1, (n) => new Float64Array(n));
    this.scaleOverLength = grown(this.scaleOverLength, slot + 1, (n) => new Float64Array(n));
    this.errorOverLength = grown(this.errorOverLength, slot + 1, (n) => new Float64Array(n));
    this.normOverLength = grown(this.normOverLength, slot + 1, (n) => new Float64Array(n));
    const { values, stride, scales } = this.kernel.quantisedRows();
    const at = slot * stride;
    const scale = scales[slot]!;
    let max = 0;
    for (let d = 0; d < dimensions; d++) max = Math.max(max, Math.abs(vector[d]!));
    let quantised = 0;
    let exact = 0;
    let error = 0;
    for (let d = 0; d < dimensions; d++) {
      const q = values[at + d]!;
      quantised += q * q;
      exact += vector[d]! * vector[d]!;
      const r = vector[d]! - q * scale;
      error += r * r;
    }
    // The scale as the quantising took it (float64), not as stored: the cosines stay as they were.
    this.norms[slot] = Math.sqrt(quantised) * (max > 0 ? max / 127 : 1);
    const length = Math.sqrt(exact);
    this.exactNorms[slot] = length;
    const over = length > 0 ? 1 / length : 0;
    this.scaleOverLength[slot] = scale * over;
    this.errorOverLength[slot] = Math.sqrt(error) * over;
    this.normOverLength[slot] = Math.sqrt(quantised) * scale * over;
    const residuals = this.wholeResiduals();
    if (!residuals) return;
    residuals.values = grown(residuals.values, (slot + 1) * dimensions, (n) => new Int8Array(n));
    residuals.scales = grown(residuals.scales, slot + 1, (n) => new Float32Array(n));
    residuals.errors = grown(residuals.errors, slot + 1, (n) => new Float64Array(n));
    const residual = Float64Array.from({ length: dimensions }, (_, d) => vector[d]! - values[at + d]! * scale);
    const step = quantizeI8(residual, dimensions, residuals.values, slot * dimensions, 1, true);
    let missed = 0;
    for (let d = 0; d < dimensions; d++) missed += (residual[d]! - residuals.values[slot * dimensions + d]! * step) ** 2;
    residuals.scales[slot] = step;
    residuals.errors[slot] = Math.sqrt(missed);
  }

  /** The residual level held in memory, for a write or a snapshot: one left in its file must be brought in first. */
  private wholeResiduals(): (Residuals & { values: Int8Array }) | undefined {
    const r = this.residuals;
    if (r && !(r.values instanceof Int8Array))
      throw new Error('the residual level is still in its snapshot file: settle the columns first');
    return r as (Residuals & { values: Int8Array }) | undefined;
  }

  /** Cosine of slot's 8-bit vector to `query`, whose norm is `queryNorm`; 0 when either is zero. */
  cosine(slot: number, query: Float32Array, queryNorm: number): number {
    const { values, stride, scales } = this.kernel.quantisedRows();
    return this.cosineIn(values, slot * stride, scales[slot]!, slot, query, queryNorm);
  }

  /** `cosine` for many slots, the kernel's views taken once. */
  cosines(slots: readonly number[], query: Float32Array, queryNorm: number): Float64Array {
    const { values, stride, scales } = this.kernel.quantisedRows();
    return Float64Array.from(slots, (slot) =>
      slot < 0 ? NaN : this.cosineIn(values, slot * stride, scales[slot]!, slot, query, queryNorm),
    );
  }

  private cosineIn(values: Int8Array, at: number, scale: number, slot: number, query: Float32Array, queryNorm: number): number {
    const { dimensions } = this;
    // Four sums: the loop is bound by the latency of each add, not by reading the vector.
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    let d3 = 0;
    let d = 0;
    for (; d + 3 < dimensions; d += 4) {
      d0 += query[d]! * values[at + d]!;
      d1 += query[d + 1]! * values[at + d + 1]!;
      d2 += query[d + 2]! * values[at + d + 2]!;
      d3 += query[d + 3]! * values[at + d + 3]!;
    }
    for (; d < dimensions; d++) d0 += query[d]! * values[at + d]!;
    const dot = d0 + d1 + (d2 + d3);
    const denominator = queryNorm * this.norms[slot]!;
    return denominator > 0 ? (dot * scale) / denominator : 0;
  }

  /** Slot's vector as scaled back from 8 bits (a copy). */
  vector(slot: number): Float32Array {
    const { values, stride, scales } = this.kernel.quantisedRows();
    const out = new Float32Array(this.dimensions);
    for (let d = 0; d < this.dimensions; d++) out[d] = values[slot * stride + d]! * scales[slot]!;
    return out;
  }

  /**
   * Slots that hold the `limit` nearest to `query` by exact cosine among those `passes` lets
   * through (which decides which slots are in use), best first, each with its two-level cosine
   * and a bound on that cosine's error (~1e-4); possibly a few more than `limit`, and all that
   * pass when fewer pass. `floor`: every slot left out has an exact cosine below it (−∞ when
   * none was). Slots whose vector or the query is zero are never among them. Undefined without
   * the residual level.
   */
  exactCandidates(
    query: Float32Array,
    limit: number,
    passes: (slot: number) => boolean,
    among?: readonly number[],
  ): ExactCandidates | undefined {
    const residuals = this.residuals;
    if (!residuals) return undefined;
    const queryNorm = norm(query, this.dimensions);
    if (!(queryNorm > 0)) return { candidates: [], floor: -Infinity };
    if (among) {
      // A few slots named up front (the entries on some code): no scan, every one refined.
      const refined = this.refine(
        query,
        queryNorm,
        among.filter((slot) => this.exactNorms[slot]! > 0 && passes(slot)),
        residuals,
      );
      const floor = kthLowerBound(refined, limit);
      return { candidates: refined.filter((r) => r.cosine + r.bound >= floor).sort((a, b) => b.cosine - a.cosine), floor };
    }
    const { sums, step } = this.kernel.products(query);
    // ‖x − x̂‖ of the query as the kernel quantised it.
    let queryError = 0;
    for (let d = 0; d < this.dimensions; d++) queryError += (query[d]! - Math.round(query[d]! / step) * step) ** 2;
    queryError = Math.sqrt(queryError);
    const { scaleOverLength, errorOverLength, normOverLength } = this;

    // Level one: every passing slot whose upper bound reaches the k-th best lower bound. In one
    // pass: the k-th best so far only rises, so a slot below it when seen is below it at the end.
    const estimateScale = step / queryNorm;
    const queryErrorShare = queryError / queryNorm;
    const lower = new TopK(limit, (a, b) => a > b);
    let toBeat = -Infinity;
    const seen: number[] = [];
    const uppers: number[] = [];
    for (let slot = 0, n = sums.length; slot < n; slot++) {
      const bound = errorOverLength[slot]! + normOverLength[slot]! * queryErrorShare + ROUNDING_SLACK;
      const estimate = sums[slot]! * scaleOverLength[slot]! * estimateScale;
      if (!(estimate + bound >= toBeat) || scaleOverLength[slot] === 0 || !passes(slot)) continue;
      seen.push(slot);
      uppers.push(estimate + bound);
      if (lower.offer(slot, estimate - bound) && lower.full) toBeat = lower.worstScore;
    }
    const level1 = seen.filter((_, i) => uppers[i]! >= toBeat);

    // Level two, on the float query: the same selection with the residual's much smaller bound.
    const refined = this.refine(query, queryNorm, level1, residuals);
    const floor2 = kthLowerBound(refined, limit);
    // A slot left at level one is below the first floor, one left at level two below the second.
    const floor = lower.full ? Math.max(toBeat, floor2) : -Infinity;
    return { candidates: refined.filter((r) => r.cosine + r.bound >= floor2).sort((a, b) => b.cosine - a.cosine), floor };
  }

  /** The slots' cosines on both levels with the float query, and the bound on each (‖x‖·‖v − v̂ − r̂‖ over the norms). */
  private refine(
    query: Float32Array,
    queryNorm: number,
    slots: readonly number[],
    residuals: Residuals,
  ): { slot: number; cosine: number; bound: number }[] {
    const { values, stride, scales } = this.kernel.quantisedRows();
    const { dimensions, exactNorms } = this;
    // Left in the snapshot file: each slot's row read from the page cache (a few hundred a search).
    const inFile = residuals.values instanceof Int8Array ? undefined : residuals.values;
    const row = inFile ? new Int8Array(dimensions) : undefined;
    return slots.map((slot) => {
      const at = slot * stride;
      let rat = slot * dimensions;
      let held = residuals.values as Int8Array;
      if (inFile) {
        inFile.readInto(row!, rat);
        [held, rat] = [row!, 0];
      }
      let first = 0;
      let second = 0;
      for (let d = 0; d < dimensions; d++) {
        first += query[d]! * values[at + d]!;
        second += query[d]! * held[rat + d]!;
      }
      const denominator = queryNorm * exactNorms[slot]!;
      const cosine = (first * scales[slot]! + second * residuals.scales[slot]!) / denominator;
      return { slot, cosine, bound: (queryNorm * residuals.errors[slot]!) / denominator + ROUNDING_SLACK };
    });
  }

  close(): void {
    this.kernel.close();
  }
}
