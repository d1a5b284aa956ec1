/** Default length of `vector_small`: a quarter of the full vector, at most 128. */
export function defaultSmallDimensions(dimensions: number): number {
  return Math.max(1, Math.min(128, Math.floor(dimensions / 4)));
}

/**
 * Derives the small search vector from the full one, locally (no second model call): the
 * renormalised prefix. A prefix can be all zeros (sparse vectors); it then stays zero rather than
 * failing the write, and such an entry is only found by the full-vector stage.
 */
export function smallVector(full: Float32Array, smallDimensions: number): Float32Array {
  const small = full.slice(0, smallDimensions);
  let sum = 0;
  for (const v of small) sum += v * v;
  if (sum > 0) {
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < small.length; i++) small[i]! *= inv;
  }
  return small;
}
