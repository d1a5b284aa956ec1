import type { Embedder } from '../embed/embedder.js';
import { localEmbedder } from '../embed/localEmbedder.js';
import { openAIEmbedder, type OpenAIEmbedderOptions } from '../embed/openaiEmbedder.js';
import { indexDocument, type IngestReport } from '../ingest/indexer.js';
import { loadMemoryFile } from '../ingest/loadMemoryFile.js';
import { invalidInput, MemcoreError, throwIfAborted } from '../model/errors.js';
import { validateMemoryDocument } from '../model/memoryFile.js';
import type { CodeLocation, ContextBundle, GoldenPath, MemoryEntry, Reason, StoreStats } from '../model/types.js';
import type { CodeReferenceQuery } from '../store/graph/graphStore.js';
import { Stores } from '../store/stores.js';
import { resolveFilter, resolveThreshold, buildTaskContext, type SearchFilterOptions, type TaskContextOptions } from '../retrieve/taskContext.js';
import { vectorCandidates } from '../retrieve/vectorCandidates.js';

/** Which embedder a database uses. An Embedder object plugs in any model. */
export type EmbedderConfig = Embedder | { provider: 'local' } | ({ provider: 'openai' } & OpenAIEmbedderOptions);

export interface OpenMemoryOptions {
  /** Database folder; created when missing. Default `./.memcore`. */
  path?: string;
  /** Default: the offline local model. */
  embedder?: EmbedderConfig;
}

export interface SemanticSearchOptions extends SearchFilterOptions {
  /** Hits at most. Default 10. */
  limit?: number;
  /** Minimum cosine similarity. Default 0 (no threshold). */
  threshold?: number;
  signal?: AbortSignal;
}

export interface SearchHit {
  entry: MemoryEntry;
  /** Cosine similarity to the query. */
  similarity: number;
  why: Reason[];
}

export interface CodeReferenceHit {
  entry: MemoryEntry;
  relevance: number;
  code: CodeLocation;
}

function resolveEmbedder(config: EmbedderConfig | undefined): Embedder {
  if (!config || ('provider' in config && config.provider === 'local')) return localEmbedder();
  if ('provider' in config && config.provider === 'openai') return openAIEmbedder(config);
  if ('embed' in config && typeof config.embed === 'function') return config;
  throw invalidInput('embedder must be { provider: "local" }, { provider: "openai", … } or an Embedder object');
}

/** Opens (or creates) a memory database folder. Close it when done. */
export async function openMemory(options: OpenMemoryOptions = {}): Promise<MemoryEngine> {
  const embedder = resolveEmbedder(options.embedder);
  const stores = await Stores.open(options.path ?? '.memcore', embedder);
  return new MemoryEngine(stores, embedder);
}

export class MemoryEngine {
  /** Writes run one at a time: each waits for the one before it. */
  private writeQueue: Promise<unknown> = Promise.resolve();

  /** @internal use openMemory() */
  constructor(
    private readonly stores: Stores,
    readonly embedder: Embedder,
  ) {}

  /** The database folder. */
  get path(): string {
    return this.stores.dir;
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writeQueue.then(work, work);
    this.writeQueue = run.catch(() => undefined);
    return run;
  }

  /** Reads a memory file (.json, .jsonl, .yaml) and upserts everything in it. All or nothing. */
  ingest(file: string, options: { signal?: AbortSignal } = {}): Promise<IngestReport> {
    if (typeof file !== 'string' || file === '') return Promise.reject(invalidInput('ingest needs a file path'));
    return this.serialized(async () => {
      const { document, external } = await loadMemoryFile(file);
      return indexDocument(this.stores, this.embedder, file, document, external, options.signal);
    });
  }

  /** Upserts a memory document given as an object in the memory file format. */
  ingestDocument(doc: unknown, options: { source?: string; signal?: AbortSignal } = {}): Promise<IngestReport> {
    const source = options.source ?? 'api';
    return this.serialized(async () => {
      const { document, external } = validateMemoryDocument(source, doc);
      return indexDocument(this.stores, this.embedder, source, document, external, options.signal);
    });
  }

  /** Upserts entries given in the memory file format (snake_case fields). */
  upsert(entries: unknown[], options: { signal?: AbortSignal } = {}): Promise<IngestReport> {
    return this.ingestDocument({ entries }, { source: 'upsert', ...options });
  }

  /** Adds relations given in the memory file format ({ type, from, to, … }). */
  link(relations: unknown[], options: { signal?: AbortSignal } = {}): Promise<IngestReport> {
    return this.ingestDocument({ relations }, { source: 'link', ...options });
  }

  /** Removes entries from both stores with every edge that touches them. */
  delete(ids: string[]): Promise<{ deleted: number }> {
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string' || id === '')) return Promise.reject(invalidInput('delete needs a list of entry ids'));
    return this.serialized(async () => {
      const found = await this.stores.table.read({ ids });
      if (found.length > 0) await this.stores.apply({ op: 'delete', ids: found.map((f) => f.entry.id) });
      return { deleted: found.length };
    });
  }

  /** Entries by id, in the order asked; unknown ids are left out. */
  async getEntries(ids: string[]): Promise<MemoryEntry[]> {
    const found = new Map((await this.stores.table.read({ ids })).map((s) => [s.entry.id, s.entry]));
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  /** Nearest entries to the query by cosine similarity; filters pushed down before the limit. */
  async semanticSearch(query: string, options: SemanticSearchOptions = {}): Promise<SearchHit[]> {
    if (typeof query !== 'string' || query.trim() === '') throw invalidInput('query must be a non-empty string');
    const limit = options.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw invalidInput(`limit must be an integer from 1 to 10000, got ${JSON.stringify(limit)}`);
    const filter = resolveFilter(options);
    const threshold = resolveThreshold(options.threshold, -1);
    throwIfAborted(options.signal);
    const [vector] = await this.embedder.embed([query], options.signal);
    return vectorCandidates(this.stores.table, vector!, { filter, limit, threshold, signal: options.signal });
  }

  /** Everything an agent should know before the task: entries with reasons, code, golden paths. */
  buildTaskContext(task: string, options: TaskContextOptions = {}): Promise<ContextBundle> {
    return buildTaskContext(this.stores, this.embedder, task, options);
  }

  /** A golden path with its steps in order, or null. */
  async getGoldenPath(id: string): Promise<GoldenPath | null> {
    if (typeof id !== 'string' || id === '') throw invalidInput('golden path id must be a non-empty string');
    return this.stores.graph.getGoldenPath(id);
  }

  /** Entries that reference matching code (filePath matches as a substring), most relevant first. */
  async findByCodeReference(query: CodeReferenceQuery): Promise<CodeReferenceHit[]> {
    for (const k of ['filePath', 'symbol', 'codebaseId'] as const) {
      if (query[k] !== undefined && (typeof query[k] !== 'string' || query[k] === '')) throw invalidInput(`${k} must be a non-empty string`);
    }
    const refs = await this.stores.graph.findByCodeReference(query);
    const entries = new Map((await this.stores.table.read({ ids: [...new Set(refs.map((r) => r.entryId))] })).map((s) => [s.entry.id, s.entry]));
    return refs.flatMap((r) => {
      const entry = entries.get(r.entryId);
      return entry ? [{ entry, relevance: r.relevance, code: r.code }] : [];
    });
  }

  async stats(): Promise<StoreStats> {
    const rows = await this.stores.table.read({});
    const tally = (key: (e: MemoryEntry) => string) =>
      rows.reduce<Record<string, number>>((acc, { entry }) => ((acc[key(entry)] = (acc[key(entry)] ?? 0) + 1), acc), {});
    const graph = await this.stores.graph.counts();
    if (graph.entries !== rows.length) {
      throw new MemcoreError(`stores disagree: LanceDB holds ${rows.length} entries, Kuzu ${graph.entries}`, 'STORE');
    }
    return {
      entries: rows.length,
      cores: tally((e) => e.coreId),
      entryTypes: tally((e) => e.entryType),
      codeLocations: graph.codeLocations,
      goldenPaths: graph.goldenPaths,
      relations: graph.relations,
      embedder: { id: this.embedder.id, dimensions: this.embedder.dimensions },
      generation: await this.stores.currentGeneration(),
    };
  }

  async close(): Promise<void> {
    await this.writeQueue;
    await this.stores.close();
  }
}
