/**
 * Every default that is not a search's, in one place: searches take theirs from their preset
 * (recipe/presets.ts), everything else from here. The settings table (config.ts), the option
 * types' TSDoc and the generated docs/configuration.md all name these values; a change here is
 * a change of behaviour, so each says why it is what it is.
 */
export const DEFAULTS = {
  store: {
    /**
     * The largest store whose entries are held whole in memory, as the Arrow columns of the load
     * scan (about their text's size again), with the second 8-bit level of the full vectors that
     * exact search bounds its error with (a byte a dimension). At 1M bench entries that is ~1 GB
     * (~0.46 GB in a process that has not written: the second level is read from its snapshot
     * file a row at a time until a write) for a bundle read of ~0.4 ms rather than a LanceDB read of
     * ~7–11 ms, and a `semanticSearch` of ~20 ms rather than a LanceDB scan of ~1.9 s.
     */
    residentMaxEntries: 1_000_000,
    /**
     * The largest store whose snapshots a long-lived process writes once its writes pause: ~1–2 s
     * at 100K on the caller's thread, 26.7 s at 1M, when a served store would answer nothing.
     * Larger stores write them on close and `memcore index`.
     */
    snapshotAfterIdleMaxEntries: 250_000,
    /**
     * A process that wrote leaves on close every snapshot a fresh reader would otherwise build: one
     * missing, or one the change log brings up to date only by reading more than this many entries
     * again. Fewer are left to the reader's catch-up, which cost ~1.5 s more than a load for 200
     * entries at 20K (a busy machine), against writing every file at each `remember` (1–2 s at
     * 100K): a judgment. A bulk write (ingest, import, import-code, reembed, restore) leaves none
     * (docs/storage.md, "Snapshots").
     */
    snapshotCatchUpMaxEntries: 10_000,
    /**
     * The largest store whose stage 1 is a scan of 8-bit small vectors in memory (132 bytes an
     * entry at 128-d, a quarter of the 8-bit full vectors held anyway). The scan grows with the
     * store, ~0.8 ms per 100K entries, and finds the true nearest small vectors; past it,
     * LanceDB's IVF index, whose default probes reached a two-stage recall@10 of only 0.835 at 1M.
     */
    scanMaxEntries: 2_000_000,
    /**
     * From this store size the scan runs on a helper thread while the keyword search runs on the
     * caller's. At 100K entries the scan takes ~1.2 ms, which the search then hides; below this
     * size it takes a few tenths of a millisecond and stays on the caller's thread (a judgment,
     * not a measured break-even).
     */
    scanThreadMinEntries: 32_768,
    /** `index()` builds LanceDB's ANN index on vector_small from this many entries. */
    annMinRows: 50_000,
    /**
     * The graph database of a new folder (existing ones keep theirs, see `memcore migrate`).
     * Kuzu until LadybugDB, its maintained fork, is measured no worse (docs/performance.md).
     */
    graph: 'kuzu' as 'ladybug' | 'kuzu',
  },
  /** The context-bundle cache: five minutes, a few hundred bundles (each a few KB). */
  cache: { ttlMs: 300_000, max: 500 },
  feedback: {
    /** Weight of a new rating in an entry's effectiveness (a moving average). */
    alpha: 0.3,
    /** Days over which an effectiveness drifts halfway back to neutral without ratings. */
    halfLifeDays: 90,
  },
  gaps: { retentionDays: 90 },
  /**
   * The team memory folder (config memory.embedWaitMs): a running engine's catch-up with the files
   * (a pull) waits this long for the texts it must embed, then indexes them without their vectors
   * and embeds them in the background (team/teamFolder.ts). A lone edit embeds in well under it.
   */
  team: { embedWaitMs: 500 },
  /** The relevance filter's chat: a budget a query can afford, one retry within it. */
  llm: { timeoutMs: 8_000, maxRetries: 1 },
  /** An OpenAI-compatible embedding server. */
  openaiEmbedder: { batchSize: 64, concurrency: 2, timeoutMs: 30_000, maxRetries: 3, chunkTokens: 512, overlapTokens: 64 },
  /**
   * The offline model: it reads 128 tokens at most, so longer texts are chunked to that. A call of
   * more than `spreadAbove` texts is spread over the worker threads (each loads a model of its own
   * first, so a smaller call stays on the caller's thread).
   */
  localEmbedder: { batchSize: 16, chunkTokens: 128, overlapTokens: 16, spreadAbove: 64 },
  /**
   * Auto-linking on ingest: a title or alias is matched from 4 characters (acronyms from 3), and
   * one mentioned by more than 2% of the entries is too common to mean a link.
   */
  autoLink: { minLength: 4, maxMentionShare: 0.02 },
  /** The reads that are not searches. */
  reads: {
    /** Entries a `listEntries` page holds, and at most. */
    listLimit: 100,
    listMaxLimit: 10_000,
    /** Hits of `findRelatedToCode`. */
    limit: 10,
    /** A core's memory block for a system prompt. */
    coreMemoryTokens: 2_000,
    /** Hops of `traverse`, and at most. */
    traverseDepth: 2,
    traverseMaxDepth: 10,
    /** Hops around an `entryGraph` focus, and at most (a drawing past 3 hops is the whole store). */
    entryGraphDepth: 1,
    entryGraphMaxDepth: 3,
    /** Entries an `entryGraph` draws, and at most: a browser draws 2,000 nodes smoothly. */
    entryGraphNodes: 2_000,
    entryGraphMaxNodes: 10_000,
  },
  /**
   * The code channel (retrieve/codeCandidates.ts, weighed in retrieve/score.ts): how a file's
   * fields, its kind and the other evidence weigh. Set on the code-localization development set
   * (docs/evaluation.md) with one setting for every language.
   */
  codeSearch: {
    /** How much more a word of the text's first line (a commit's subject, an issue's title) weighs. */
    subjectBoost: 2,
    /** Weight of code's abbreviation of a task's word (`parameter` → `param`, `ctx` → `context`) relative to the word's. */
    abbreviationShare: 0.5,
    /** Files each field's BM25 search offers. */
    candidates: 200,
    /** BM25 weights of the path's words, the symbols' names/signatures/doc comments, and the text. */
    pathWeight: 2,
    namesWeight: 0.5,
    textWeight: 1,
    /** Score kept by tests, examples, docs, benchmarks and generated copies: found, but after the code a change is made in. */
    secondaryPrior: 0.35,
    /** Relative score a file gets from an entry of the bundle that references it (times the reference's relevance). */
    referenced: 0.3,
    /** Relative score a file gets per top hit that imports it (of the best such hit's). */
    imports: 0.1,
    /** Top hits whose imports are followed. */
    importsFrom: 3,
    /** Code references a bundle holds at most; each costs its line's tokens of `maxTokens`. */
    maxCodeRefs: 8,
    /** Hits of `findCode`, and at most. */
    limit: 10,
    maxLimit: 200,
  },
  /** `memcore serve --http`'s port. */
  httpPort: 7077,
} as const;

/** The LLM relevance filter's: entries kept at most, offered (the best by score), and the call's time limit. */
export const LLM_FILTER_DEFAULTS = { maxSelect: 10, overRetrieve: 50, timeoutMs: 8_000 } as const;
