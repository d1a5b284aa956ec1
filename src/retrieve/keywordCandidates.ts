import { throwIfAborted } from '../model/errors.js';
import type { EntryColumns, KeywordIndex, MemoryIndex } from '../store/memoryIndex.js';
import type { EntryFilter } from '../model/entryFilter.js';
import { makeHit, type Hit } from './candidate.js';
import { analyze } from '../text/analyze.js';

/**
 * BM25 hits over title, aliases and content (the in-memory KeywordIndex), filter applied before the
 * limit, term weights from the cores searched; ids and scores.
 */
export async function keywordCandidates(
  memory: MemoryIndex,
  query: string,
  opts: { filter: EntryFilter; limit: number; signal?: AbortSignal },
): Promise<Hit[]> {
  throwIfAborted(opts.signal);
  const [index, columns] = await Promise.all([memory.keywords(), memory.columns()]);
  throwIfAborted(opts.signal);
  return searchKeywords(index, columns, query, opts);
}

/** keywordCandidates on the structures in hand, synchronously: it can then run while the stage-1 scan does (hybridCandidates). */
export function searchKeywords(
  index: KeywordIndex,
  columns: EntryColumns,
  query: string,
  opts: { filter: EntryFilter; limit: number },
): Hit[] {
  const hits = index.search(keywordQuery(query), { limit: opts.limit, groups: opts.filter.cores, accept: columns.matcher(opts.filter) });
  const best = hits[0]?.score || 1;
  return hits.map((h, i) => makeHit(h.id, 0, [{ kind: 'keyword', rank: i + 1, score: h.score / best, bm25: h.score }]));
}

/**
 * Keyword evidence for candidates the keyword search did not rank on its own terms.
 *
 * `keywordScore`: the task's BM25 over every candidate the keyword search did not return
 * (graph-reached entries, vector hits past its limit), relative to the best keyword hit: an entry
 * the graph reached that shares the task's words ("director", "born") then weighs like one the
 * search found, where only the top `candidates` hits used to count. Measured on the development
 * splits (context): 2Wiki all-gold@8 90.2 → 92.2, HotpotQA 96 → 97, LoCoMo R@25/50 83.7/88.4 →
 * 84.2/89.0 (R@5/10 60.9/74.3 → 60.6/74.0), SciFact unchanged.
 *
 * `bridgeScore`: when the task names entries, the BM25 of its other words (bridgeWords) over the
 * entries the graph reached, relative to the best of them. "Where was the composer of Billy
 * Elliot born?" names Billy Elliot; what it asks of Billy Elliot's neighbours is "composer …
 * born". Against the whole task, whose rarest words are the name, the composer's passage scored
 * no better than the actors' who never mention a composer.
 */
export async function addKeywordScores(
  memory: MemoryIndex,
  task: string,
  fused: readonly Hit[],
  candidates: Hit[],
  filter: EntryFilter,
): Promise<void> {
  const index = await memory.keywords();
  const query = keywordQuery(task);
  const best = Math.max(0, ...fused.flatMap((c) => c.why.map((r) => (r.kind === 'keyword' ? r.bm25 : 0))));
  const unscored = candidates.filter((c) => !c.why.some((r) => r.kind === 'keyword'));
  if (best > 0 && unscored.length > 0) {
    const bm25 = index.scoreDocuments(
      query,
      unscored.map((c) => c.id),
      { groups: filter.cores },
    );
    for (const c of unscored) {
      const score = bm25.get(c.id);
      if (score !== undefined) c.keywordScore = Math.min(1, score / best);
    }
  }
  const reached = candidates.filter((c) => c.why.some((r) => r.kind === 'graph'));
  const rest = bridgeWords(
    query,
    fused.flatMap((c) => c.why.flatMap((r) => (r.kind === 'mention' ? [r.mention] : []))),
  );
  if (rest === '' || reached.length === 0) return;
  const bm25 = index.scoreDocuments(
    rest,
    reached.map((c) => c.id),
    { groups: filter.cores },
  );
  const top = Math.max(0, ...bm25.values());
  if (top === 0) return;
  for (const c of reached) {
    const score = bm25.get(c.id);
    if (score !== undefined) c.bridgeScore = score / top;
  }
}

/**
 * The words of a keyword query that are not part of the names it mentions: the relation a
 * multi-hop task asks about ("composer … born" in "Where was the composer of Billy Elliot born?").
 * Empty when the task names nothing, or nothing else.
 */
export function bridgeWords(query: string, mentions: readonly string[]): string {
  if (mentions.length === 0) return '';
  const named = new Set(mentions.flatMap((m) => analyze(m)));
  const rest = query.split(' ').filter((w) => {
    const terms = analyze(w);
    return terms.length > 0 && !terms.some((t) => named.has(t));
  });
  return rest.join(' ');
}

/** English function words: question words, auxiliaries, pronouns, articles, prepositions. */
const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between both but by can could
   did do does doing down during each ever few for from further get got had has have having he her here hers herself him himself his how
   i if in into is it its itself just let many may me might more most much must my myself no nor not now of off on once one only or other
   our ours ourselves out over own same shall she should so some such than that the their theirs them themselves then there these they
   this those through to too under until up us very was we were what when where which while who whom why will with would you your yours
   yourself yourselves`.split(/\s+/),
);

/**
 * The task's content words for BM25: function words ("what did … the …") match short texts by
 * chance. A capitalised function word inside a sentence stays, since it is part of a name ("a song
 * by When The Stars Go Blue", "Talk About A Stranger"), and so does one in capitals (an acronym:
 * "IT", "US"). A task of nothing but function words is kept whole.
 */
export function keywordQuery(text: string): string {
  const kept: string[] = [];
  const all: string[] = [];
  let sentenceStart = true;
  for (const m of text.matchAll(/[\p{L}\p{N}_]+|[.!?]/gu)) {
    const w = m[0];
    if (w === '.' || w === '!' || w === '?') {
      sentenceStart = true;
      continue;
    }
    all.push(w);
    const inName = !sentenceStart && /^\p{Lu}/u.test(w);
    const acronym = /^\p{Lu}{2,}$/u.test(w); // IT, US, AM: not the pronoun or the verb
    if (inName || acronym || !STOP_WORDS.has(w.toLowerCase())) kept.push(w);
    sentenceStart = false;
  }
  return (kept.length > 0 ? kept : all).join(' ');
}
