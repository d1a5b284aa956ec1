import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMemory, type MemoryEngine, type OpenMemoryOptions } from '../engine/memoryEngine.js';
import type { TaskContextOptions } from '../retrieve/taskContext.js';
import type { AutoLinkOptions } from '../ingest/autoLink.js';
import { invalidInput } from '../model/errors.js';
import { aggregate, allGoldAt, type MetricRow } from './metrics.js';
import { memoryPart, type EvalFile, type EvalQuery } from './evalFile.js';
import { buildPeers, PEERS, type PeerDocument, type PeerName } from './peers.js';
import { EntriesTable } from '../store/lance/entriesTable.js';
import { readMeta } from '../store/meta.js';
import { capText } from '../embed/chunkText.js';
import { EMBEDDED_CHARS } from '../retrieve/queryText.js';
import { embeddingText } from '../ingest/indexer.js';
import type { PresetName } from '../recipe/searchRecipe.js';
import type { SearchOptions } from '../recipe/searchOptions.js';

export const STRATEGIES = ['vector', 'matryoshka', 'keyword', 'hybrid', 'graph', 'graph-ppr', 'context'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** Each strategy is a preset with the overrides it measures (beside each query's cores and k). */
const STRATEGY_RECIPES: Record<Exclude<Strategy, 'context'>, { recipe: PresetName; overrides: (k: number) => SearchOptions }> = {
  vector: { recipe: 'semantic', overrides: (k) => ({ limit: k }) },
  matryoshka: { recipe: 'matryoshka', overrides: (k) => ({ limit: k, candidates: Math.max(100, k * 2) }) },
  keyword: { recipe: 'keyword', overrides: (k) => ({ limit: k }) },
  hybrid: { recipe: 'hybrid', overrides: (k) => ({ limit: k, candidates: Math.max(100, k * 2) }) },
  graph: {
    recipe: 'find',
    overrides: (k) => ({ maxEntries: k, candidates: Math.max(100, k * 2), threshold: -1, graphRanking: 'proximity' }),
  },
  'graph-ppr': {
    recipe: 'find',
    overrides: (k) => ({ maxEntries: k, candidates: Math.max(100, k * 2), threshold: -1, graphRanking: 'pagerank' }),
  },
};

/** Ranked entry ids for one query under one strategy. */
async function rank(m: MemoryEngine, s: Strategy, q: EvalQuery, k: number, context: EvalContextOptions): Promise<string[]> {
  const cores = q.cores ? { cores: q.cores } : {};
  const ids = (hits: { entry: { id: string } }[]) => hits.map((h) => h.entry.id);
  if (s === 'context') {
    // The ranking to k, as before the evidence cut: what the bundle keeps of it is measured apart (measureBundles).
    const ranking = { evidenceCut: false, ...context, ...cores, maxEntries: k };
    if (q.diff) return ids((await m.contextForDiff(q.text, ranking)).entries);
    return ids((await m.buildTaskContext(q.text, ranking)).entries);
  }
  const { recipe, overrides } = STRATEGY_RECIPES[s];
  return ids(await m.search(q.text, { recipe, overrides: { ...cores, ...overrides(k) } }));
}

/** A query whose gold was not all in the top k, with where each gold id ranked (null: not retrieved). */
export interface EvalMiss {
  id: string;
  text: string;
  gold: { id: string; rank: number | null }[];
}

export interface StrategyResult {
  overall: MetricRow;
  byCategory: Record<string, MetricRow>;
  msPerQuery: number;
  /** With `misses`: the queries missed at that k, in file order. */
  misses?: EvalMiss[];
}

export interface EvalReport {
  name: string;
  entries: number;
  relations: number;
  queries: number;
  ks: number[];
  ingestMs: number;
  embedder: string;
  strategies: Partial<Record<Strategy, StrategyResult>>;
  /** With `peers`: LanceDB's and Orama's own searches on the same entries and vectors, scored alike (src/eval/peers.ts). */
  peers?: Partial<Record<PeerName, StrategyResult>>;
  /** With `misses`: the cut-off, and how deep each strategy's list was searched for the gold ranks. */
  misses?: { k: number; depth: number };
  /** With `simulateFeedback`: the rated half, and the other half's context scores with and without the ratings. */
  feedback?: { rated: number; ratings: number; scored: number; without: MetricRow; with: MetricRow };
  /** With the `context` strategy: its bundles at the default options, with the evidence cut and without (`evidenceCut: false`). */
  bundles?: { cut: BundleRow; uncut: BundleRow };
}

/** What the bundles of a run hold, averaged over the queries. */
export interface BundleRow {
  /** Share of a bundle's entries that are gold (bundles with entries). */
  precision: number;
  /** Share of a query's gold ids in its bundle. */
  goldKept: number;
  /** Entries a bundle. */
  size: number;
  /** Estimated tokens of a bundle's entries (title and content). */
  tokens: number;
}

/** Options of the `context` strategy besides the ones each query sets (cores, maxEntries). */
export type EvalContextOptions = Omit<TaskContextOptions, 'cores' | 'maxEntries' | 'signal'>;

export interface RunEvalOptions {
  strategies?: Strategy[];
  /** Options the `context` strategy passes to buildTaskContext, e.g. `{ scoreCombination: 'product' }`. Default none. */
  context?: EvalContextOptions;
  ks?: number[];
  autoLink?: boolean | AutoLinkOptions;
  /** Embedder and other engine settings. */
  engine?: Omit<OpenMemoryOptions, 'path' | 'cache'>;
  /**
   * Database folder to ingest into and keep. A later run on the same folder re-ingests, which
   * embeds only new or changed entries, so strategies can be compared again without re-embedding.
   * Default: a fresh temp folder, removed afterwards.
   */
  keepDb?: string;
  /**
   * List, per strategy, the queries whose gold ids are not all in the top `misses`, with the rank
   * of each gold id (looked for down to the largest k or `misses`, whichever is deeper).
   */
  misses?: number;
  /**
   * Simulated feedback: each core's queries are split in two (alternately); the first ten entries of
   * the context bundles of the first half are rated (gold entries useful, the others not useful), then the second half is
   * scored with the ratings and without (weights.effectiveness 0). The ratings stay in the folder:
   * with `keepDb`, use a copy.
   */
  simulateFeedback?: boolean;
  /** Also score the peers (LanceDB flat vector, FTS, RRF hybrid; Orama hybrid, vector, full-text) on the stored entries and vectors. */
  peers?: boolean;
  onProgress?: (message: string) => void;
}

/** Ingests the eval file into a fresh temp database, runs each strategy on every query, scores them. */
export async function runEval(file: EvalFile, options: RunEvalOptions = {}): Promise<EvalReport> {
  const strategies = options.strategies ?? [...STRATEGIES];
  for (const s of strategies) if (!STRATEGIES.includes(s)) throw invalidInput(`unknown strategy "${s}"; one of ${STRATEGIES.join(', ')}`);
  const ks = [...new Set(options.ks ?? [2, 5, 8, 10, 25, 50])].sort((a, b) => a - b);
  if (ks.length === 0 || ks.some((k) => !Number.isInteger(k) || k < 1 || k > 1000))
    throw invalidInput('k values must be whole numbers from 1 to 1000');
  if (options.misses !== undefined && (!Number.isInteger(options.misses) || options.misses < 1 || options.misses > 1000))
    throw invalidInput('misses must be a whole number from 1 to 1000');
  const maxK = Math.max(...ks, 10, options.misses ?? 0);
  const progress = options.onProgress ?? (() => undefined);
  const dir = options.keepDb ?? (await mkdtemp(join(tmpdir(), 'memcore-eval-')));
  const m = await openMemory({ ...options.engine, path: dir, cache: { ttlMs: 0 } });
  try {
    const started = performance.now();
    const memory = memoryPart(file);
    progress(
      `ingesting ${(memory.entries as unknown[] | undefined)?.length ?? 0} entries${options.autoLink ? ' with auto-linking' : ''} …`,
    );
    const ingest = await m.ingestDocument(memory, { source: file.name ?? 'eval', autoLink: options.autoLink });
    const ingestMs = performance.now() - started;
    const score = (results: { ranked: string[]; gold: string[]; category: string }[], ms: number): StrategyResult => {
      const byCategory: Record<string, MetricRow> = {};
      for (const c of [...new Set(results.map((r) => r.category))].sort())
        byCategory[c] = aggregate(
          results.filter((r) => r.category === c),
          ks,
        );
      return {
        overall: aggregate(results, ks),
        byCategory,
        msPerQuery: ms / Math.max(1, results.length),
        ...(options.misses ? { misses: missesAt(file.queries, results, options.misses) } : {}),
      };
    };
    const report: EvalReport = {
      name: file.name ?? 'eval',
      entries: ingest.entries.added + ingest.entries.updated + ingest.entries.unchanged,
      relations: ingest.relations,
      queries: file.queries.length,
      ks,
      ingestMs,
      embedder: m.embedder.id,
      strategies: {},
      ...(options.misses ? { misses: { k: options.misses, depth: maxK } } : {}),
    };
    for (const s of strategies) {
      const results: { ranked: string[]; gold: string[]; category: string }[] = [];
      const t0 = performance.now();
      for (const [i, q] of file.queries.entries()) {
        results.push({ ranked: await rank(m, s, q, maxK, options.context ?? {}), gold: q.gold, category: String(q.category ?? 'all') });
        if ((i + 1) % 25 === 0) progress(`${s}: ${i + 1}/${file.queries.length} queries`);
      }
      report.strategies[s] = score(results, performance.now() - t0);
      progress(`${s}: done`);
    }
    if (strategies.includes('context')) report.bundles = await measureBundles(m, file.queries, options.context ?? {}, progress);
    if (options.peers) report.peers = await scorePeers(m, dir, file.queries, maxK, score, progress);
    // After the strategies, so that their numbers are without ratings.
    if (options.simulateFeedback) report.feedback = await simulateFeedback(m, file.queries, ks, maxK, options.context ?? {}, progress);
    return report;
  } finally {
    await m.close();
    if (options.keepDb === undefined) await rm(dir, { recursive: true, force: true });
  }
}

/** The peers built on the entries and vectors stored in `dir`, each query embedded as the engine embeds it, scored by `score`. */
async function scorePeers(
  m: MemoryEngine,
  dir: string,
  queries: EvalQuery[],
  k: number,
  score: (results: { ranked: string[]; gold: string[]; category: string }[], ms: number) => StrategyResult,
  progress: (message: string) => void,
): Promise<NonNullable<EvalReport['peers']>> {
  const meta = (await readMeta(dir))!;
  const table = await EntriesTable.open(join(dir, 'lance'), meta.embedder.dimensions, meta.smallDimensions);
  const documents: PeerDocument[] = [];
  try {
    for await (const batch of table.scanStored(5_000))
      for (const s of batch) documents.push({ id: s.entry.id, core: s.entry.coreId, text: embeddingText(s.entry), vector: s.vector });
  } finally {
    table.close();
  }
  progress(`peers: embedding ${queries.length} queries …`);
  const vectors = await m.embedder.embed(queries.map((q) => capText(q.text, EMBEDDED_CHARS)));
  const set = await buildPeers(documents, PEERS, progress);
  const out: NonNullable<EvalReport['peers']> = {};
  try {
    for (const peer of set.peers) {
      const results: { ranked: string[]; gold: string[]; category: string }[] = [];
      const t0 = performance.now();
      for (const [i, q] of queries.entries())
        results.push({ ranked: await peer.search(q.text, vectors[i]!, k, q.cores), gold: q.gold, category: String(q.category ?? 'all') });
      out[peer.name] = score(results, performance.now() - t0);
      progress(`${peer.name}: done`);
    }
  } finally {
    await set.close();
  }
  return out;
}

/** The context bundles at the default options (the cut on and off): precision, gold kept, size and tokens. */
async function measureBundles(
  m: MemoryEngine,
  queries: EvalQuery[],
  context: EvalContextOptions,
  progress: (message: string) => void,
): Promise<NonNullable<EvalReport['bundles']>> {
  const measure = async (evidenceCut: boolean): Promise<BundleRow> => {
    let precision = 0;
    let withEntries = 0;
    let goldKept = 0;
    let size = 0;
    let tokens = 0;
    for (const q of queries) {
      const options = { ...context, evidenceCut, ...(q.cores ? { cores: q.cores } : {}) };
      const bundle = q.diff ? await m.contextForDiff(q.text, options) : await m.buildTaskContext(q.text, options);
      const gold = new Set(q.gold);
      const hits = bundle.entries.filter((e) => gold.has(e.entry.id)).length;
      if (bundle.entries.length > 0) {
        precision += hits / bundle.entries.length;
        withEntries++;
      }
      goldKept += gold.size === 0 ? 1 : hits / gold.size;
      size += bundle.entries.length;
      tokens += bundle.entries.reduce((sum, e) => sum + e.tokens, 0);
    }
    const n = Math.max(1, queries.length);
    return { precision: precision / Math.max(1, withEntries), goldKept: goldKept / n, size: size / n, tokens: tokens / n };
  };
  progress('bundles: with the evidence cut and without …');
  return { cut: await measure(true), uncut: await measure(false) };
}

/** Entries of a bundle the simulated agent rates. */
const RATED_PER_BUNDLE = 10;

/** See RunEvalOptions.simulateFeedback. */
async function simulateFeedback(
  m: MemoryEngine,
  queries: EvalQuery[],
  ks: number[],
  k: number,
  context: EvalContextOptions,
  progress: (message: string) => void,
): Promise<NonNullable<EvalReport['feedback']>> {
  const seen = new Map<string, number>();
  const [rated, scored] = [[] as EvalQuery[], [] as EvalQuery[]];
  for (const q of queries) {
    const core = q.cores?.join('\u0000') ?? '';
    const n = seen.get(core) ?? 0;
    seen.set(core, n + 1);
    (n % 2 === 0 ? rated : scored).push(q);
  }
  let ratings = 0;
  for (const [i, q] of rated.entries()) {
    const bundle = await m.buildTaskContext(q.text, {
      evidenceCut: false,
      ...context,
      ...(q.cores ? { cores: q.cores } : {}),
      maxEntries: k,
    });
    const gold = new Set(q.gold);
    // An agent reads and rates about what a prompt holds: the first ten.
    for (const e of bundle.entries.slice(0, RATED_PER_BUNDLE)) {
      await m.feedback({ entryId: e.entry.id, useful: gold.has(e.entry.id), bundleId: bundle.bundleId! });
      ratings++;
    }
    if ((i + 1) % 50 === 0) progress(`feedback: rated the bundles of ${i + 1}/${rated.length} queries`);
  }
  const run = async (weights: EvalContextOptions['weights']) => {
    const results: { ranked: string[]; gold: string[]; category: string }[] = [];
    for (const q of scored)
      results.push({
        ranked: await rank(m, 'context', q, k, { ...context, ...(weights ? { weights } : {}) }),
        gold: q.gold,
        category: 'all',
      });
    return aggregate(results, ks);
  };
  const without = await run({ ...context.weights, effectiveness: 0, taskEffectiveness: 0 });
  const withRatings = await run(context.weights);
  return { rated: rated.length, ratings, scored: scored.length, without, with: withRatings };
}

function missesAt(queries: EvalQuery[], results: { ranked: string[] }[], k: number): EvalMiss[] {
  return queries.flatMap((q, i) => {
    const ranked = results[i]!.ranked;
    if (allGoldAt(ranked, new Set(q.gold), k) === 1) return [];
    return [{ id: q.id, text: q.text, gold: q.gold.map((id) => ({ id, rank: ranked.indexOf(id) + 1 || null })) }];
  });
}

const pct = (x: number) => (100 * x).toFixed(1);

/** The report as a table: one row per strategy, recall@k and all-gold@k, nDCG@10, MRR, ms/query. */
export function formatReport(r: EvalReport, reference: string[] = []): string {
  const head = ['strategy', ...r.ks.map((k) => `R@${k}`), ...r.ks.map((k) => `AG@${k}`), 'nDCG@10', 'MRR', 'ms/q'];
  const named = [...Object.entries(r.strategies), ...Object.entries(r.peers ?? {}).map(([p, res]) => [`${p} (peer)`, res] as const)] as [
    string,
    StrategyResult,
  ][];
  const rows = named.map(([s, res]) => [
    s,
    ...r.ks.map((k) => pct(res.overall.recall[k]!)),
    ...r.ks.map((k) => pct(res.overall.allGold[k]!)),
    pct(res.overall.ndcg10),
    pct(res.overall.mrr),
    res.msPerQuery.toFixed(1),
  ]);
  const table = (h: string[], body: string[][]) => {
    const widths = h.map((c, i) => Math.max(c.length, ...body.map((b) => b[i]!.length)));
    return [h, ...body].map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
  };
  const out = [
    `${r.name}: ${r.entries} entries, ${r.relations} relations, ${r.queries} queries; embedder ${r.embedder}; ingest ${(r.ingestMs / 1000).toFixed(1)} s`,
    'R = recall, AG = all-gold (every gold id in the top k), in %',
    '',
    table(head, rows),
  ];
  const categories = Object.keys(Object.values(r.strategies)[0]?.byCategory ?? {});
  if (categories.length > 1) {
    out.push('', `per category, R@${r.ks.join('/R@')}:`);
    const catRows = named.map(([s, res]) => [s, ...categories.map((c) => r.ks.map((k) => pct(res.byCategory[c]!.recall[k]!)).join('/'))]);
    out.push(
      table(['strategy', ...categories.map((c) => `cat ${c} (${Object.values(r.strategies)[0]!.byCategory[c]!.queries})`)], catRows),
    );
  }
  for (const [s, res] of named) {
    if (!res.misses) continue;
    out.push(
      '',
      `${s}: ${res.misses.length} of ${r.queries} queries miss a gold id in the top ${r.misses?.k} (gold ranks; – = not in the top ${r.misses?.depth}):`,
    );
    for (const miss of res.misses)
      out.push(
        `  ${miss.id}  ${miss.text.includes('\n') ? `${miss.text.split('\n')[0]} …` : miss.text}`,
        `      ${miss.gold.map((g) => `${g.id} ${g.rank ?? '–'}`).join(' | ')}`,
      );
  }
  if (r.bundles) {
    const b = r.bundles;
    const row = (name: string, x: BundleRow) => [name, pct(x.precision), pct(x.goldKept), x.size.toFixed(1), x.tokens.toFixed(0)];
    out.push(
      '',
      'context bundles at the default options (maxEntries 12): precision and gold kept in %, entries and tokens a bundle',
      table(['bundle', 'precision', 'gold kept', 'entries', 'tokens'], [row('evidence cut', b.cut), row('no cut (maxEntries)', b.uncut)]),
    );
  }
  if (r.feedback) {
    const f = r.feedback;
    out.push(
      '',
      `simulated feedback: the context bundles of ${f.rated} queries rated (${f.ratings} ratings: gold useful, the rest not); the other ${f.scored} queries:`,
    );
    out.push(
      table(
        ['context', ...r.ks.map((k) => `R@${k}`), ...r.ks.map((k) => `AG@${k}`), 'nDCG@10', 'MRR'],
        [
          [
            'without ratings',
            ...r.ks.map((k) => pct(f.without.recall[k]!)),
            ...r.ks.map((k) => pct(f.without.allGold[k]!)),
            pct(f.without.ndcg10),
            pct(f.without.mrr),
          ],
          [
            'with ratings',
            ...r.ks.map((k) => pct(f.with.recall[k]!)),
            ...r.ks.map((k) => pct(f.with.allGold[k]!)),
            pct(f.with.ndcg10),
            pct(f.with.mrr),
          ],
        ],
      ),
    );
  }
  if (reference.length > 0)
    out.push('', 'Published reference numbers (same metric, same kind of data):', ...reference.map((l) => `  ${l}`));
  return out.join('\n');
}
