/**
 * The one place that turns the evidence about an entry into a number. Stages collect evidence
 * (similarity, ranks, graph paths); only this module weighs it.
 */
import { cosineSimilarity } from '../embed/embedder.js';
import { invalidInput } from '../model/errors.js';
import { checkOptionNames, optionNames } from '../model/options.js';
import { CONFIDENCE_LEVELS, ENTRY_EDGE_TYPES, type CodeMatch, type EntryEdgeType, type Reason } from '../model/types.js';
import type { EntryFeatures } from '../store/memoryIndex.js';
import type { Hit } from './candidate.js';
import { DEFAULTS } from '../config/defaults.js';
import { analyze, codeSpellings, splitIdentifiers } from '../text/analyze.js';

export interface ScoringWeights {
  /** Weight of cosine similarity to the task. Default 0.3. */
  similarity: number;
  /** Weight of the keyword (BM25) score relative to the best keyword hit. Default 0.5. */
  keyword: number;
  /**
   * How much a graph-reached entry's match on the task's words other than the names it mentions
   * ("composer … born" of "the composer of Billy Elliot") counts as keyword evidence, relative to
   * a match on the whole task: the keyword component is the larger of the two. Default 0.8.
   */
  bridge: number;
  /** Weight of being named in the task (title or alias). Default 0.3. */
  mention: number;
  /**
   * Weight of referencing code a change touches (`contextForDiff`): in full for a touched symbol or
   * lines, half for the changed file itself, a quarter for other code in that file. Default 1: a
   * reference to the changed code outranks any match on the diff's words.
   */
  code: number;
  /**
   * Weight of what ratings say (`memory.feedback`): the entry's effectiveness minus neutral (0.5);
   * for an entry never rated, its source's at half, else its core's at a quarter; nothing rated,
   * nothing changes. Default 0.2: five "not useful" ratings in a row (effectiveness 0.08) cost 0.083,
   * and this part moves a score by at most 0.1 either way, for any task: the global amount.
   * Ratings given for a task count more for tasks like it: `taskEffectiveness`.
   */
  effectiveness: number;
  /**
   * Weight of ratings given for tasks like this one (taskRelatedness): the mean of their signals
   * minus neutral, each weighed by how alike its task is to this one, shrunk toward neutral as if
   * one neutral rating of full likeness were among them. Default 1: five "not useful" for this
   * very task cost 0.42 here, on top of at most 0.1 from `effectiveness`; for an unrelated task
   * (likeness 0) only the global 0.1 at most is left.
   */
  taskEffectiveness: number;
  /** Weight of the graph score: personalised PageRank, or proximity to the seeds (a direct hit counts as its own similarity). Default 0.5. */
  graph: number;
  /** Weight of confidence (low 0, medium 0.5, high 1). Default 0.05. */
  confidence: number;
  /** Weight of importance (1–10 scaled to 0.1–1). Default 0.07. */
  importance: number;
  /** Weight of recency (1 when just updated, halving every `recencyHalfLifeDays`). Default 0.03. */
  recency: number;
  /** Proximity kept per hop away from a seed. Default 0.6. */
  hopDecay: number;
  /** Proximity kept when crossing an edge of each type (times a RELATED edge's own weight is not applied). */
  edgeWeights: Record<EntryEdgeType, number>;
  /** Default 180. */
  recencyHalfLifeDays: number;
}

export const DEFAULT_WEIGHTS: ScoringWeights = {
  // Tuned on the development splits of HotpotQA and LoCoMo with the local embedder
  // (docs/evaluation.md): keyword evidence beats a small model's cosine, and PageRank over mention links
  // is what finds the second hop of a question.
  similarity: 0.3,
  keyword: 0.5,
  // A partial match counts somewhat less than a whole one; 2Wiki all-gold@8 reaches 96 from 0.7
  // and HotpotQA keeps 97 up to 0.85 (docs/evaluation.md).
  bridge: 0.8,
  mention: 0.3,
  code: 1,
  effectiveness: 0.2,
  taskEffectiveness: 1,
  graph: 0.5,
  confidence: 0.05,
  importance: 0.07,
  recency: 0.03,
  hopDecay: 0.6,
  edgeWeights: { RELATED: 0.8, DEPENDS_ON: 1, SUPERSEDES: 0.5 },
  recencyHalfLifeDays: 180,
};

const SCORING_WEIGHT_NAMES = optionNames<ScoringWeights>()([
  'similarity',
  'keyword',
  'bridge',
  'mention',
  'code',
  'effectiveness',
  'taskEffectiveness',
  'graph',
  'confidence',
  'importance',
  'recency',
  'hopDecay',
  'edgeWeights',
  'recencyHalfLifeDays',
]);

/** Refuses unknown weights and values that are not finite numbers ≥ 0 (a half-life must be > 0). */
export function checkWeights(where: string, w: unknown): void {
  checkOptionNames(where, w, SCORING_WEIGHT_NAMES);
  const value = (name: string, v: unknown) => {
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0))
      throw invalidInput(`${where}.${name} must be a finite number ≥ 0, got ${JSON.stringify(v)}`);
  };
  const weights = (w ?? {}) as Record<string, unknown>;
  for (const name of SCORING_WEIGHT_NAMES) if (name !== 'edgeWeights') value(name, weights[name]);
  if (weights.recencyHalfLifeDays === 0) throw invalidInput(`${where}.recencyHalfLifeDays must be more than 0`);
  checkOptionNames(`${where}.edgeWeights`, weights.edgeWeights, ENTRY_EDGE_TYPES);
  for (const t of ENTRY_EDGE_TYPES) value(`edgeWeights.${t}`, (weights.edgeWeights as Record<string, unknown> | undefined)?.[t]);
}

export function resolveWeights(w: Partial<ScoringWeights> | undefined): ScoringWeights {
  return { ...DEFAULT_WEIGHTS, ...w, edgeWeights: { ...DEFAULT_WEIGHTS.edgeWeights, ...w?.edgeWeights } };
}

/** Rough token count for budgeting: about four characters a token in English prose and code. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * An entry whose every code reference is orphaned (its code is gone) keeps this share of its score
 * in a bundle of an engine that knows its repository: it may be stale, and still worth a look.
 */
export const STALE_CODE_FACTOR = 0.5;

const CODE_MATCH: Record<CodeMatch, number> = { touched: 1, file: 0.5, 'same-file': 0.25 };

/**
 * How much a rating given for another task counts for this one, 0 to 1, from the likeness of the
 * two tasks (feedback/taskSimilarity.ts): the larger of their shared words (Dice 0.3 → 0, 0.8 → 1)
 * and their cosine (0.75 → 0, 0.95 → 1). The floors are where tasks of one project about different
 * things sit: they share a word or two, and a small model puts any two of them at 0.5–0.7.
 */
export function taskRelatedness(likeness: { words: number; cosine: number | undefined }): number {
  const ramp = (x: number, from: number, to: number) => Math.min(1, Math.max(0, (x - from) / (to - from)));
  return Math.max(ramp(likeness.words, 0.3, 0.8), likeness.cosine === undefined ? 0 : ramp(likeness.cosine, 0.75, 0.95));
}

/** The task part of what ratings say (weight `taskEffectiveness`): see ScoringWeights.taskEffectiveness. */
export function taskRatingScore(ratings: readonly { relatedness: number; useful: number; kept: number }[]): number {
  let sum = 0;
  let weight = 1; // one neutral rating of full likeness: a single rating cannot swing it all the way
  for (const r of ratings) {
    sum += r.relatedness * r.kept * (r.useful - 0.5);
    weight += r.relatedness;
  }
  return sum / weight;
}

/** A hit with what scoring needs of its entry (EntryColumns), before the entry is read. */
export interface ScorableHit extends Hit {
  features: EntryFeatures;
}

/** A scored hit, best first; its entry is read only if it makes the bundle. */
export interface ScoredHit {
  id: string;
  score: number;
  similarity: number;
  why: Reason[];
}

export const SCORE_COMBINATIONS = ['sum', 'product'] as const;
/** How importance and recency meet relevance (TaskContextOptions.scoreCombination). */
export type ScoreCombination = (typeof SCORE_COMBINATIONS)[number];

/**
 * Scores and orders candidates. `graphScores` (0–1, from the recipe's GraphRanker) is the graph
 * component; a candidate without one scores 0 there. Recency runs from each entry's own date
 * (`features.updatedAt`) to `now`.
 */
export function scoreCandidates(
  candidates: ScorableHit[],
  opts: {
    weights?: Partial<ScoringWeights>;
    now?: Date;
    graphScores: Map<string, number>;
    combination?: ScoreCombination;
    /** What ratings say about a candidate, and the share it counts at (Effectiveness.forRanking). */
    effectiveness?: (
      id: string,
      features: EntryFeatures,
    ) => { value: number; signals: number; of: 'entry' | 'source' | 'core'; share: number } | undefined;
    /** The candidate's ratings given for tasks, with how related each task is to this one (taskRelatedness) and how much of it is kept by now. */
    taskRatings?: (id: string) => readonly { relatedness: number; useful: number; kept: number }[];
  },
): ScoredHit[] {
  const product = opts.combination === 'product';
  const w = resolveWeights(opts.weights);
  const now = (opts.now ?? new Date()).getTime();
  const halfLifeMs = w.recencyHalfLifeDays * 86_400_000;
  return candidates
    .map((c) => {
      const f = c.features;
      const age = Math.max(0, now - f.updatedAt.getTime());
      const keyword = Math.max(
        c.keywordScore ?? 0,
        w.bridge * (c.bridgeScore ?? 0),
        ...c.why.map((r) => (r.kind === 'keyword' ? r.score : 0)),
      );
      const mentioned = c.why.some((r) => r.kind === 'mention') ? 1 : 0;
      const code = Math.max(0, ...c.why.map((r) => (r.kind === 'code' ? CODE_MATCH[r.match] : 0)));
      const relevance =
        w.similarity * c.similarity +
        w.keyword * keyword +
        w.mention * mentioned +
        w.code * code +
        w.graph * (opts.graphScores.get(c.id) ?? 0) +
        w.confidence * (CONFIDENCE_LEVELS.indexOf(f.confidence) / (CONFIDENCE_LEVELS.length - 1));
      const importance = f.importance / 10;
      const recency = Math.pow(0.5, age / halfLifeMs);
      const rated = opts.effectiveness?.(c.id, f);
      const forTasks = w.taskEffectiveness > 0 ? (opts.taskRatings?.(c.id) ?? []) : [];
      const used =
        (rated && w.effectiveness > 0 ? w.effectiveness * rated.share * (rated.value - 0.5) : 0) +
        (forTasks.length > 0 ? w.taskEffectiveness * taskRatingScore(forTasks) : 0);
      const base = product ? relevance * importance * recency : relevance + w.importance * importance + w.recency * recency;
      const why: Reason[] =
        used !== 0 && rated ? [...c.why, { kind: 'feedback', effectiveness: rated.value, signals: rated.signals, of: rated.of }] : c.why;
      return { id: c.id, score: base + used, similarity: c.similarity, why };
    })
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

/**
 * Maximal marginal relevance: reorders scored entries so each next one trades its score against
 * its similarity to those already chosen. `lambda` 0 keeps the order; 1 is all diversity.
 * Entries without a vector are treated as unlike the others.
 */
export function diversify<T extends { id: string; score: number }>(scored: T[], vectors: Map<string, Float32Array>, lambda: number): T[] {
  if (lambda <= 0 || scored.length < 3) return scored;
  const rest = [...scored];
  const chosen: T[] = [rest.shift()!];
  while (rest.length > 0) {
    let bestIndex = 0;
    let bestValue = -Infinity;
    rest.forEach((s, i) => {
      const v = vectors.get(s.id);
      const redundancy = v
        ? Math.max(
            ...chosen.map((c) => {
              const u = vectors.get(c.id);
              return u ? cosineSimilarity(u, v) : 0;
            }),
          )
        : 0;
      const value = (1 - lambda) * s.score - lambda * redundancy;
      if (value > bestValue) {
        bestValue = value;
        bestIndex = i;
      }
    });
    chosen.push(rest.splice(bestIndex, 1)[0]!);
  }
  return chosen;
}

/** The code channel's weights (DEFAULTS.codeSearch). */
export type CodeSearchWeights = Pick<
  (typeof DEFAULTS)['codeSearch'],
  'pathWeight' | 'namesWeight' | 'textWeight' | 'secondaryPrior' | 'referenced' | 'imports'
>;

/**
 * Folders and names of files that are found but are not where a change is usually made: tests and
 * their fixtures, examples, docs, benchmarks, scripts, and generated or vendored copies of the code.
 */
const SECONDARY_FOLDER =
  /^(tests?|__tests__|__mocks__|spec|specs|testing|testdata|test_?data|fixtures?|e2e|examples?|samples?|docs|benchmarks?|bench|scripts|vendor|third_party|node_modules|dist|build|out|generated|gen)$|[_-]dist$/i;
const SECONDARY_NAME = /(^|[._-])(test|tests|spec|bench)\.[a-z]+$|^test_.*\.py$|_test\.go$|^conftest\.py$|\.(stories|snap)\.[a-z]+$/i;

/** Whether a source file is a test, example, doc, benchmark or generated copy (see SECONDARY_FOLDER). */
export function isSecondaryCode(path: string): boolean {
  const parts = path.split('/');
  return SECONDARY_NAME.test(parts[parts.length - 1]!) || parts.slice(0, -1).some((p) => SECONDARY_FOLDER.test(p));
}

/**
 * A file's code-search score: its fields' BM25 weighted, the path and symbol names counting as
 * their own evidence beside the text, times the prior of its kind (tests and copies after code).
 */
export function codeSearchScore(
  fields: { path: number; names: number; text: number },
  filePath: string,
  weights: CodeSearchWeights = DEFAULTS.codeSearch,
): number {
  const lexical = weights.pathWeight * fields.path + weights.namesWeight * fields.names + weights.textWeight * fields.text;
  return lexical * (isSecondaryCode(filePath) ? weights.secondaryPrior : 1);
}

/**
 * The words a code search weighs, each once with its weight: identifiers split (splitIdentifiers),
 * a word repeated in the text counting more (1 + ln count), and the words of the first line (a
 * commit's subject, an issue's title) `subjectBoost` times as much; code's abbreviation of a word
 * (`parameter` → `param`, and back: analyze.ts's codeSpellings) at `abbreviationShare` of its weight.
 */
export function codeQueryTerms(text: string, subjectBoost: number = DEFAULTS.codeSearch.subjectBoost): { word: string; weight: number }[] {
  const byTerm = new Map<string, { word: string; count: number; subject: boolean }>();
  const [subject = '', ...rest] = text.split('\n');
  const add = (line: string, inSubject: boolean) => {
    for (const word of splitIdentifiers(line).split(/[^\p{L}\p{N}]+/u)) {
      const term = analyze(word)[0];
      if (term === undefined) continue;
      const seen = byTerm.get(term);
      if (seen) {
        seen.count++;
        seen.subject ||= inSubject;
      } else byTerm.set(term, { word, count: 1, subject: inSubject });
    }
  };
  add(subject, true);
  add(rest.join('\n'), false);
  const terms = [...byTerm.entries()].map(([term, t]) => ({
    term,
    word: t.word,
    weight: (1 + Math.log(t.count)) * (t.subject ? subjectBoost : 1),
  }));
  // Code's abbreviations of the words (and the words of its abbreviations), at half their weight.
  const spelled = terms.flatMap((t) =>
    codeSpellings(t.word).flatMap((other) => {
      const term = analyze(other)[0];
      return term === undefined || byTerm.has(term)
        ? []
        : [{ term, word: other, weight: t.weight * DEFAULTS.codeSearch.abbreviationShare }];
    }),
  );
  const out = new Map<string, { word: string; weight: number }>();
  for (const t of [...terms, ...spelled])
    if (!out.has(t.term) || out.get(t.term)!.weight < t.weight) out.set(t.term, { word: t.word, weight: t.weight });
  return [...out.values()];
}

/**
 * A code location's final score from its evidence: code search relative to the best file's (0–1),
 * plus what the bundle's entries referencing it say (their reference's relevance, the first
 * entry's weighing most), plus being imported by the best hits.
 */
export function fuseCodeEvidence(
  evidence: { search: number; referenced: number; imported: number },
  weights: CodeSearchWeights = DEFAULTS.codeSearch,
): number {
  return evidence.search + weights.referenced * evidence.referenced + weights.imports * evidence.imported;
}
