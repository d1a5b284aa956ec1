import OpenAI from 'openai';
import { describeEndpointFailure } from './endpointFailure.js';
import type { Embedder } from './embedder.js';
import { embedInBatches } from './embedder.js';
import { chunkText, embedChunked } from './chunkText.js';
import { invalidInput, MemcoreError } from '../model/errors.js';
import { checkOptionNames, optionNames } from '../model/options.js';
import { DEFAULTS } from '../config/defaults.js';

export interface OpenAIEmbedderOptions {
  /** e.g. `http://127.0.0.1:11434/v1` (Ollama), `http://host:8000/v1` (vLLM); default OpenAI. */
  baseURL?: string;
  /** Sent as a bearer token. Local servers accept any value. Default: `OPENAI_API_KEY` or "none". */
  apiKey?: string;
  /** Model name as the server knows it, e.g. `nomic-embed-text`, `text-embedding-3-small`. */
  model: string;
  /** Length of the vectors memcore stores. */
  dimensions: number;
  /**
   * Ask the server for `dimensions` (OpenAI text-embedding-3, some vLLM models). When false the
   * server's full vector is truncated locally, which needs `truncatable`. Default false.
   */
  sendDimensions?: boolean;
  /** The model is Matryoshka-trained, so a prefix of its vector is a valid embedding. Default false. */
  truncatable?: boolean;
  /** Texts per request. Default 64. */
  batchSize?: number;
  /** Requests in flight at once. Default 2. */
  concurrency?: number;
  /**
   * The sizes a Matryoshka model was trained for (e.g. [64, 128, 256, 512, 768]). When given,
   * `dimensions` and a database's small-vector length must be among them.
   */
  matryoshkaDimensions?: number[];
  /** Longer texts are split into chunks of this many (estimated) tokens and mean-pooled. Default 512. */
  chunkTokens?: number;
  /** Tokens shared by consecutive chunks. Default 64. */
  overlapTokens?: number;
  /** Per request, in milliseconds. Default 30 000. */
  timeoutMs?: number;
  /** Retries on connection errors, 408, 409, 429 and 5xx, with exponential backoff. Default 3. */
  maxRetries?: number;
}

export const OPENAI_EMBEDDER_OPTIONS = optionNames<OpenAIEmbedderOptions>()([
  'baseURL',
  'apiKey',
  'model',
  'dimensions',
  'sendDimensions',
  'truncatable',
  'batchSize',
  'concurrency',
  'matryoshkaDimensions',
  'chunkTokens',
  'overlapTokens',
  'timeoutMs',
  'maxRetries',
]);

/** Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint, through the `openai` client. */
export function openAIEmbedder(options: OpenAIEmbedderOptions): Embedder {
  checkOptionNames('openAIEmbedder', options, OPENAI_EMBEDDER_OPTIONS);
  if (!options.model) throw invalidInput('embedder.model is required for the openai embedder');
  if (!Number.isInteger(options.dimensions) || options.dimensions < 1) {
    throw invalidInput(`embedder.dimensions must be a positive integer, got ${String(options.dimensions)}`);
  }
  const batchSize = options.batchSize ?? DEFAULTS.openaiEmbedder.batchSize;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw invalidInput(`embedder.batchSize must be a positive integer, got ${batchSize}`);
  const concurrency = options.concurrency ?? DEFAULTS.openaiEmbedder.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw invalidInput(`embedder.concurrency must be a positive integer, got ${concurrency}`);
  const allowed = options.matryoshkaDimensions;
  if (allowed !== undefined && !allowed.includes(options.dimensions)) {
    throw invalidInput(`embedder.dimensions ${options.dimensions} is not one of the model's Matryoshka sizes (${allowed.join(', ')})`);
  }
  const chunking = {
    chunkTokens: options.chunkTokens ?? DEFAULTS.openaiEmbedder.chunkTokens,
    overlapTokens: options.overlapTokens ?? DEFAULTS.openaiEmbedder.overlapTokens,
  };
  chunkText('', chunking); // validates the chunk options now rather than at the first long text
  const client = new OpenAI({
    baseURL: options.baseURL,
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'none',
    timeout: options.timeoutMs ?? DEFAULTS.openaiEmbedder.timeoutMs,
    maxRetries: options.maxRetries ?? DEFAULTS.openaiEmbedder.maxRetries,
  });
  const { model, dimensions } = options;
  const truncatable = options.truncatable ?? false;
  const self: Embedder = {
    id: `openai:${model}`,
    dimensions,
    truncatable,
    ...(allowed ? { matryoshkaDimensions: allowed } : {}),
    async embed(texts, signal) {
      // Long texts become several chunks; each text's vector is the token-weighted mean of its chunks'.
      return embedChunked(texts, chunking, self.id, (chunks) =>
        embedInBatches(
          chunks,
          batchSize,
          self,
          async (batch) => {
            let response;
            try {
              response = await client.embeddings.create(
                { model, input: batch, encoding_format: 'float', ...(options.sendDimensions ? { dimensions } : {}) },
                { signal },
              );
            } catch (e) {
              if (e instanceof OpenAI.APIUserAbortError || signal?.aborted) {
                const err = new Error('The operation was aborted', { cause: e });
                err.name = 'AbortError';
                throw err;
              }
              throw new MemcoreError(describeEndpointFailure('embedding', client.baseURL, model, e), 'EMBEDDING');
            }
            const data = [...response.data].sort((a, b) => a.index - b.index);
            return data.map((d) => {
              const v = d.embedding;
              if (!Array.isArray(v)) throw new MemcoreError(`embedder ${self.id} returned a non-array embedding`, 'EMBEDDING');
              return v.length > dimensions && truncatable ? v.slice(0, dimensions) : v;
            });
          },
          signal,
          concurrency,
        ),
      );
    },
  };
  return self;
}
