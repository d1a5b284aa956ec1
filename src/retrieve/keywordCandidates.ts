import { throwIfAborted } from '../model/errors.js';
import type { Stores } from '../store/stores.js';
import type { EntryFilter } from '../store/lance/filter.js';
import type { Hit } from './candidate.js';

/**
 * BM25 hits over title, aliases and content (the in-memory KeywordIndex), filter applied before the
 * limit, term weights from the cores searched; ids and scores.
 */
export async function keywordCandidates(
  stores: Stores,
  query: string,
  opts: { filter: EntryFilter; limit: number; signal?: AbortSignal },
): Promise<Hit[]> {
  throwIfAborted(opts.signal);
  const [index, columns] = await Promise.all([stores.keywords(), stores.columns()]);
  throwIfAborted(opts.signal);
  const hits = index.search(keywordQuery(query), { limit: opts.limit, groups: opts.filter.cores, accept: columns.matcher(opts.filter) });
  const best = hits[0]?.score || 1;
  return hits.map((h, i) => ({ id: h.id, similarity: 0, why: [{ kind: 'keyword', rank: i + 1, score: h.score / best, bm25: h.score }] }));
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
