/**
 * How alike two tasks are, for weighing a rating given for one task in the ranking of another
 * (score.ts, `taskEffectiveness`): by their words (the share of their analysed terms they share,
 * Dice) and by their embeddings (cosine). Two measures, because each misses what the other sees:
 * a paraphrase shares few words, and a small model's cosine is high for any two tasks of a project.
 */
import { cosineSimilarity } from '../embed/embedder.js';

export interface TaskLikeness {
  /** Dice coefficient of the two tasks' term sets, 0 to 1. */
  words: number;
  /** Cosine of their embeddings; undefined when either has none. */
  cosine: number | undefined;
}

export function taskLikeness(
  a: { terms: ReadonlySet<string>; vector?: Float32Array },
  b: { terms: ReadonlySet<string>; vector?: Float32Array },
): TaskLikeness {
  let shared = 0;
  for (const t of a.terms) if (b.terms.has(t)) shared++;
  const sizes = a.terms.size + b.terms.size;
  return {
    words: sizes === 0 ? 0 : (2 * shared) / sizes,
    cosine: a.vector && b.vector && a.vector.length === b.vector.length ? cosineSimilarity(a.vector, b.vector) : undefined,
  };
}
