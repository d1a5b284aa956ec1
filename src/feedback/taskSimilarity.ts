/**
 * How alike two tasks are, for weighing a rating given for one task in the ranking of another
 * (score.ts, `taskEffectiveness`): by their words (the share of their analysed terms they share,
 * Dice) and by their embeddings (cosine). Two measures, because each misses what the other sees:
 * a paraphrase shares few words, and a small model's cosine is high for any two tasks of a project.
 */
import { capText } from '../embed/chunkText.js';
import { cosineSimilarity, type Embedder } from '../embed/embedder.js';
import { EMBEDDED_CHARS } from '../retrieve/queryText.js';
import { taskRelatedness } from '../retrieve/score.js';
import { analyze } from '../text/analyze.js';
import type { Effectiveness } from './effectiveness.js';

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

/**
 * The ratings the candidates were given for tasks, each with how related its task is to this one
 * (score.ts taskRelatedness). A rated task is embedded once, the first time a ranking needs it;
 * if the embedder fails, words alone say how alike the tasks are.
 */
export async function ratingsForTask(
  effectiveness: Effectiveness,
  candidates: readonly { id: string }[],
  opts: { task: string; vector: Float32Array | undefined; embedder: Embedder; now: number; signal: AbortSignal | undefined },
): Promise<Map<string, { relatedness: number; useful: number; kept: number }[]>> {
  const out = new Map<string, { relatedness: number; useful: number; kept: number }[]>();
  if (effectiveness.byTask.size === 0) return out;
  const rated = candidates.flatMap((c) => {
    const ratings = effectiveness.taskRatings(c.id, opts.now);
    return ratings.length > 0 ? [{ id: c.id, ratings }] : [];
  });
  if (rated.length === 0) return out;
  const missing = [...new Set(rated.flatMap((r) => r.ratings.map((x) => x.task)))].filter((t) => !effectiveness.taskVectors.has(t));
  if (opts.vector && missing.length > 0) {
    const vectors = await opts.embedder
      .embed(
        missing.map((t) => capText(t, EMBEDDED_CHARS)),
        opts.signal,
      )
      .catch((e: unknown) => {
        if (opts.signal?.aborted) throw e;
        return undefined;
      });
    missing.forEach((t, i) => effectiveness.taskVectors.set(t, vectors?.[i]));
  }
  const self = { terms: new Set(analyze(opts.task)), ...(opts.vector ? { vector: opts.vector } : {}) };
  for (const { id, ratings } of rated)
    out.set(
      id,
      ratings.map((r) => {
        const vector = effectiveness.taskVectors.get(r.task);
        return {
          relatedness: taskRelatedness(taskLikeness(self, { terms: r.terms, ...(vector ? { vector } : {}) })),
          useful: r.useful,
          kept: r.kept,
        };
      }),
    );
  return out;
}
