import { normalize } from './embedder.js';

/** Default length of `vector_small`: a quarter of the full vector, at most 128. */
export function defaultSmallDimensions(dimensions: number): number {
  return Math.max(1, Math.min(128, Math.floor(dimensions / 4)));
}

/**
 * Derives the small search vector from the full one, locally (no second model call):
 * the renormalised prefix.
 */
export function smallVector(full: Float32Array, smallDimensions: number): Float32Array {
  return normalize(full.slice(0, smallDimensions), 'matryoshka-prefix');
}
