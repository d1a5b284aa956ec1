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
  let sum = 0;
  for (const x of v) sum += x * x;
  // A prefix can be all zeros (sparse vectors): it stays zero rather than failing the write.
  if (sum > 0) {
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < v.length; i++) v[i]! *= inv;
  }
  return v;
}

/** The small vector of a full one under a projection, unit length. */
export function project(full: Float32Array, projection: Projection): Float32Array {
  if (projection.kind === 'prefix') return normalizeInPlace(full.slice(0, projection.dimensions));
  const out = new Float32Array(projection.components.length);
  const { mean } = projection;
  projection.components.forEach((row, k) => {
    let dot = 0;
    for (let i = 0; i < row.length; i++) dot += row[i]! * (full[i]! - mean[i]!);
    out[k] = dot;
  });
  return normalizeInPlace(out);
}

/** A small deterministic PRNG so a refit on the same data gives the same projection. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Modified Gram–Schmidt on the rows of q (k × d), in place. */
function orthonormalizeRows(q: Float64Array[], rand: () => number): void {
  for (let i = 0; i < q.length; i++) {
    const qi = q[i]!;
    for (let j = 0; j < i; j++) {
      const qj = q[j]!;
      let dot = 0;
      for (let x = 0; x < qi.length; x++) dot += qi[x]! * qj[x]!;
      for (let x = 0; x < qi.length; x++) qi[x]! -= dot * qj[x]!;
    }
    let norm = Math.hypot(...qi);
    if (norm < 1e-10) {
      // Rank-deficient data: any direction orthogonal to the others will do.
      for (let x = 0; x < qi.length; x++) qi[x] = rand() - 0.5;
      i--;
      continue;
    }
    norm = 1 / norm;
    for (let x = 0; x < qi.length; x++) qi[x]! *= norm;
  }
}

/**
 * Fits a k-component PCA projection by subspace iteration on the covariance of (a sample of)
 * the vectors. Cost O(n·d² + iterations·k·d²); n is capped by `sample`.
 */
export function fitPca(vectors: Float32Array[], k: number, opts: { sample?: number; iterations?: number; seed?: number } = {}): Projection {
  if (vectors.length === 0) throw new Error('cannot fit a projection on no vectors');
  const d = vectors[0]!.length;
  const rand = mulberry32(opts.seed ?? 42);
  const sampleSize = Math.min(vectors.length, opts.sample ?? 5000);
  const step = vectors.length / sampleSize;
  const sample = Array.from({ length: sampleSize }, (_, i) => vectors[Math.floor(i * step)]!);

  const mean = new Float64Array(d);
  for (const v of sample) for (let i = 0; i < d; i++) mean[i]! += v[i]!;
  for (let i = 0; i < d; i++) mean[i]! /= sampleSize;

  // Covariance, upper triangle then mirrored.
  const cov = Array.from({ length: d }, () => new Float64Array(d));
  const centred = new Float64Array(d);
  for (const v of sample) {
    for (let i = 0; i < d; i++) centred[i] = v[i]! - mean[i]!;
    for (let i = 0; i < d; i++) {
      const ci = centred[i]!;
      if (ci === 0) continue;
      const row = cov[i]!;
      for (let j = i; j < d; j++) row[j]! += ci * centred[j]!;
    }
  }
  for (let i = 0; i < d; i++) for (let j = i + 1; j < d; j++) cov[j]![i] = cov[i]![j]!;

  let q = Array.from({ length: k }, () => Float64Array.from({ length: d }, () => rand() - 0.5));
  orthonormalizeRows(q, rand);
  for (let it = 0; it < (opts.iterations ?? 30); it++) {
    q = q.map((row) => {
      const next = new Float64Array(d);
      for (let i = 0; i < d; i++) {
        const ci = cov[i]!;
        let dot = 0;
        for (let j = 0; j < d; j++) dot += ci[j]! * row[j]!;
        next[i] = dot;
      }
      return next;
    });
    orthonormalizeRows(q, rand);
  }
  return { kind: 'pca', dimensions: k, mean: Array.from(mean), components: q.map((r) => Array.from(r)), fittedOn: vectors.length };
}
