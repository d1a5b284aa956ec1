import { MemcoreError, throwIfAborted } from '../model/errors.js';

/** Turns texts into unit-length vectors. Implement it to plug in any model. */
export interface Embedder {
  /** Stable model id, stored with the table: opening a store with another id is an error. */
  readonly id: string;
  /** Length of every vector `embed` returns. */
  readonly dimensions: number;
  /**
   * True when the model was trained so that a prefix of its vector is itself a good embedding
   * (Matryoshka: nomic-embed-text, mxbai, text-embedding-3-*). The small search vector is then a
   * prefix; otherwise it is a projection fitted on the stored vectors.
   */
  readonly truncatable: boolean;
  /** For Matryoshka models: the sizes they were trained for; a database's small-vector length must be one. */
  readonly matryoshkaDimensions?: number[];
  /**
   * Keep this model's vectors in the persistent embedding cache (default true). Set false for an
   * embedder that is cheaper than a cache read, such as a lookup of precomputed vectors.
   */
  readonly cacheVectors?: boolean;
  /** One vector per text, in order, each normalised to length 1. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/**
 * How an embedder embeds a write's texts away from the caller's thread, when it has a way to
 * (the local model: its worker pool). A served write would otherwise queue behind the queries
 * whose texts the server's one thread embeds. Internal, beside the public Embedder interface.
 */
export const EMBED_FOR_WRITE = Symbol('memcore.embedForWrite');

type WithWriteEmbedding = Embedder & { [EMBED_FOR_WRITE]?: (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]> };

/** How an embedder gets ready before its first call, when it has something to load (the local model). Internal. */
export const WARM_UP = Symbol('memcore.warmUp');

/** Loads what `embedder` would load at its first call (a server calls this once it listens); nothing for an embedder without WARM_UP. */
export async function warmUpEmbedder(embedder: Embedder): Promise<void> {
  await (embedder as Embedder & { [WARM_UP]?: () => Promise<void> })[WARM_UP]?.();
}

/** A write's texts embedded: off the caller's thread when the embedder can (EMBED_FOR_WRITE), else as any call. */
export function embedForWrite(embedder: Embedder, texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
  const offThread = (embedder as WithWriteEmbedding)[EMBED_FOR_WRITE];
  return offThread ? offThread(texts, signal) : embedder.embed(texts, signal);
}

/** Euclidean length of the first `length` values (all by default), summed in order: every norm of the query path is this one. */
export function norm(v: ArrayLike<number>, length = v.length): number {
  let sum = 0;
  for (let i = 0; i < length; i++) sum += v[i]! * v[i]!;
  return Math.sqrt(sum);
}

/** Scales a vector to unit length in place; rejects zero and non-finite vectors. */
export function normalize(vector: Float32Array, model: string): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) {
    const v = vector[i]!;
    if (!Number.isFinite(v)) throw new MemcoreError(`embedder ${model} returned a non-finite value at position ${i}`, 'EMBEDDING');
    sum += v * v;
  }
  if (sum === 0) throw new MemcoreError(`embedder ${model} returned an all-zero vector`, 'EMBEDDING');
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i]! *= inv;
  return vector;
}

export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Runs `embedBatch` over `texts` in batches of `batchSize`, `concurrency` at a time, keeping the
 * order and checking every vector (count, length, finite values) before normalising it.
 */
export async function embedInBatches(
  texts: string[],
  batchSize: number,
  embedder: Pick<Embedder, 'id' | 'dimensions'>,
  embedBatch: (batch: string[]) => Promise<ArrayLike<number>[]>,
  signal?: AbortSignal,
  concurrency = 1,
): Promise<Float32Array[]> {
  const batches: string[][] = [];
  for (let start = 0; start < texts.length; start += batchSize) batches.push(texts.slice(start, start + batchSize));
  const results: Float32Array[][] = new Array(batches.length);
  let nextBatch = 0;
  const worker = async () => {
    while (nextBatch < batches.length) {
      const i = nextBatch++;
      results[i] = await embedOneBatch(batches[i]!, embedder, embedBatch, signal);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
  return results.flat();
}

async function embedOneBatch(
  batch: string[],
  embedder: Pick<Embedder, 'id' | 'dimensions'>,
  embedBatch: (batch: string[]) => Promise<ArrayLike<number>[]>,
  signal: AbortSignal | undefined,
): Promise<Float32Array[]> {
  throwIfAborted(signal);
  const vectors = await embedBatch(batch);
  throwIfAborted(signal);
  if (vectors.length !== batch.length) {
    throw new MemcoreError(`embedder ${embedder.id} returned ${vectors.length} vectors for ${batch.length} texts`, 'EMBEDDING');
  }
  return vectors.map((v) => {
    if (v.length !== embedder.dimensions) {
      throw new MemcoreError(
        `embedder ${embedder.id} returned a ${v.length}-dimension vector, expected ${embedder.dimensions}`,
        'EMBEDDING',
      );
    }
    // Check the raw values: Float32Array.from would quietly turn null into 0 and "1" into 1.
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x !== 'number' || !Number.isFinite(x)) {
        throw new MemcoreError(`embedder ${embedder.id} returned a non-finite value at position ${i}: ${JSON.stringify(x)}`, 'EMBEDDING');
      }
    }
    return normalize(Float32Array.from(v), embedder.id);
  });
}
