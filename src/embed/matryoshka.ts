import { MatrixKernel } from '../kernel/matrixKernel.js';
import { norm } from './embedder.js';

/**
 * The small search vector (`vector_small`) and how it is derived from the full one, locally (never
 * a second model call): the renormalised prefix for models trained for truncation, or a PCA
 * projection fitted on the stored vectors for models that are not (the local default).
 */

/** Default length of `vector_small`: a quarter of the full vector, at most 128. */
export function defaultSmallDimensions(dimensions: number): number {
  return Math.max(1, Math.min(128, Math.floor(dimensions / 4)));
}

export type Projection =
  | { kind: 'prefix'; dimensions: number }
  | { kind: 'pca'; dimensions: number; mean: number[]; /** k rows of length d, orthonormal */ components: number[][]; fittedOn: number };

function normalizeInPlace(v: Float32Array): Float32Array {
  const length = norm(v);
  // A prefix can be all zeros (sparse vectors): it stays zero rather than failing the write.
  if (length > 0) {
    const inv = 1 / length;
    for (let i = 0; i < v.length; i++) v[i]! *= inv;
  }
  return v;
}

/** A PCA projection's components as a kernel, and the components times the mean, made once per projection object. */
const kernels = new WeakMap<object, { components: MatrixKernel; centre: Float32Array }>();

/** The small vector of a full one under a projection, unit length. */
export function project(full: Float32Array, projection: Projection): Float32Array {
  if (projection.kind === 'prefix') return normalizeInPlace(full.slice(0, projection.dimensions));
  let kernel = kernels.get(projection);
  if (!kernel) {
    const components = new MatrixKernel(projection.components.flat(), projection.components.length, projection.mean.length);
    kernel = { components, centre: components.apply(projection.mean) };
    kernels.set(projection, kernel);
  }
  // C·(x − mean) as C·x − C·mean: the input goes to the kernel as it is.
  const out = kernel.components.apply(full);
  for (let r = 0; r < out.length; r++) out[r]! -= kernel.centre[r]!;
  return normalizeInPlace(out);
}

/** A small deterministic PRNG so a refit on the same data gives the same projection. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Modified Gram–Schmidt on the k rows (length d) of the flat matrix q, in place. */
function orthonormalizeRows(q: Float64Array, k: number, d: number, rand: () => number): void {
  for (let i = 0; i < k; i++) {
    const oi = i * d;
    for (let attempt = 0; ; attempt++) {
      for (let j = 0; j < i; j++) {
        const oj = j * d;
        let dot = 0;
        for (let x = 0; x < d; x++) dot += q[oi + x]! * q[oj + x]!;
        for (let x = 0; x < d; x++) q[oi + x]! -= dot * q[oj + x]!;
      }
      let norm = 0;
      for (let x = 0; x < d; x++) norm += q[oi + x]! * q[oi + x]!;
      if (norm > 1e-20 || attempt > 3) {
        const inv = 1 / Math.sqrt(norm || 1);
        for (let x = 0; x < d; x++) q[oi + x]! *= inv;
        break;
      }
      // Rank-deficient data: any direction orthogonal to the others will do.
      for (let x = 0; x < d; x++) q[oi + x] = rand() - 0.5;
    }
  }
}

/** How many vectors fitPca fits on by default, spread evenly over those it is given. */
export const PCA_SAMPLE = 5000;

/**
 * Fits a k-dimensional PCA subspace by subspace iteration on the covariance of (a sample of) the
 * vectors. Cosine similarity after projection does not depend on the basis chosen inside the
 * subspace, so the basis is left unsorted. Cost O(n·d² + iterations·k·d²), the products in
 * WebAssembly SIMD (MatrixKernel); n is capped by `sample`.
 */
export function fitPca(vectors: Float32Array[], k: number, opts: { sample?: number; iterations?: number; seed?: number } = {}): Projection {
  if (vectors.length === 0) throw new Error('cannot fit a projection on no vectors');
  const d = vectors[0]!.length;
  const rand = mulberry32(opts.seed ?? 42);
  const sampleSize = Math.min(vectors.length, opts.sample ?? PCA_SAMPLE);
  const step = vectors.length / sampleSize;
  const sample = Array.from({ length: sampleSize }, (_, i) => vectors[Math.floor(i * step)]!);

  const mean = new Float64Array(d);
  for (const v of sample) for (let i = 0; i < d; i++) mean[i]! += v[i]!;
  for (let i = 0; i < d; i++) mean[i]! /= sampleSize;

  // Covariance (d × d, unscaled: the scale does not move the eigenvectors), row i being the
  // centred data's transpose times its own row i.
  const transposed = new Float32Array(d * sampleSize);
  sample.forEach((v, s) => {
    for (let i = 0; i < d; i++) transposed[i * sampleSize + s] = v[i]! - mean[i]!;
  });
  const data = new MatrixKernel(transposed, d, sampleSize);
  const cov = new Float32Array(d * d);
  for (let i = 0; i < d; i++) data.applyOwnRow(i, cov.subarray(i * d, (i + 1) * d));
  const covariance = new MatrixKernel(cov, d, d);

  const q = Float64Array.from({ length: k * d }, () => rand() - 0.5);
  orthonormalizeRows(q, k, d, rand);
  const next = new Float64Array(k * d);
  const row = new Float32Array(d);
  for (let it = 0; it < (opts.iterations ?? 10); it++) {
    for (let r = 0; r < k; r++) next.set(covariance.apply(q.subarray(r * d, (r + 1) * d), row), r * d);
    q.set(next);
    orthonormalizeRows(q, k, d, rand);
  }
  const components = Array.from({ length: k }, (_, r) => Array.from(q.subarray(r * d, (r + 1) * d)));
  return { kind: 'pca', dimensions: k, mean: Array.from(mean), components, fittedOn: vectors.length };
}
