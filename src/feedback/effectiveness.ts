/**
 * What use says about entries: agents rate what a bundle gave them (`memory.feedback`, MCP
 * `rate_memory`), each rating a signal from 0 (not useful) to 1 (useful), kept in
 * `<db>/feedback.jsonl` through the journal. Each entry, source and core has an effectiveness: an
 * exponential moving average of its signals (α 0.3), drifting back toward neutral (0.5) with a
 * half-life of 90 days without signals. The scorer folds in an entry's own effectiveness, else
 * its source's at half, else its core's at a quarter (score.ts, weight `effectiveness`); with no
 * signals it is neutral and ranking is exactly as without feedback. A rating given for a task
 * (the bundle's) also counts for tasks like that one, by their words and embeddings
 * (taskSimilarity.ts; score.ts, weight `taskEffectiveness`).
 */
import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULTS } from '../config/defaults.js';
import { analyze } from '../text/analyze.js';

export interface FeedbackSignal {
  /** Counted once: `bundleId` + entry id for a rating from a bundle, else unique. */
  key: string;
  /** ISO time of the rating. */
  at: string;
  entryId: string;
  coreId: string;
  source: string | null;
  bundleId: string | null;
  /** 0 not useful … 1 useful. */
  useful: number;
  note?: string;
  /** The task the entry was rated for (the bundle's), when known: the rating counts most for tasks like it. */
  task?: string;
}

/** A rating given for a task, as ranking weighs it for another task (taskSimilarity.ts, score.ts). */
export interface TaskRating {
  task: string;
  /** The task's terms as the keyword index analyses them. */
  terms: ReadonlySet<string>;
  useful: number;
  /** ms */
  at: number;
}

export interface EffectivenessOptions {
  /** Weight of a new signal in the moving average. Default 0.3. */
  alpha?: number;
  /** Days over which an effectiveness drifts halfway back to neutral without signals. Default 90. */
  halfLifeDays?: number;
}

export const NEUTRAL = 0.5;
const FILE = 'feedback.jsonl';

/** One moving average: its value at `at` (ms) and the signals in it. */
interface Average {
  value: number;
  at: number;
  signals: number;
}

export class Effectiveness {
  readonly entries = new Map<string, Average>();
  readonly sources = new Map<string, Average>();
  readonly cores = new Map<string, Average>();
  readonly keys = new Set<string>();
  /** Per entry: its ratings given for a task. */
  readonly byTask = new Map<string, TaskRating[]>();
  /** Vectors of rated tasks, embedded when a ranking first needs them (undefined: the embedder failed). */
  readonly taskVectors = new Map<string, Float32Array | undefined>();
  private readonly alpha: number;
  private readonly halfLifeMs: number;

  constructor(signals: readonly FeedbackSignal[] = [], options: EffectivenessOptions = {}) {
    this.alpha = options.alpha ?? DEFAULTS.feedback.alpha;
    this.halfLifeMs = (options.halfLifeDays ?? DEFAULTS.feedback.halfLifeDays) * 86_400_000;
    this.add(signals);
  }

  /** Folds signals in (in time order; a key already counted is skipped). */
  add(signals: readonly FeedbackSignal[]): void {
    for (const s of [...signals].sort((a, b) => a.at.localeCompare(b.at))) {
      if (this.keys.has(s.key)) continue;
      this.keys.add(s.key);
      const at = Date.parse(s.at);
      this.fold(this.entries, s.entryId, s.useful, at);
      this.fold(this.cores, s.coreId, s.useful, at);
      if (s.source) this.fold(this.sources, s.source, s.useful, at);
      if (s.task) {
        const list = this.byTask.get(s.entryId) ?? [];
        list.push({ task: s.task, terms: new Set(analyze(s.task)), useful: s.useful, at });
        this.byTask.set(s.entryId, list);
      }
    }
  }

  /**
   * An entry's ratings given for a task, each with its drift toward neutral by now (`kept`: the
   * share of its distance from neutral left, as for the moving averages).
   */
  taskRatings(entryId: string, now = Date.now()): (TaskRating & { kept: number })[] {
    return (this.byTask.get(entryId) ?? []).map((r) => ({ ...r, kept: Math.pow(0.5, Math.max(0, now - r.at) / this.halfLifeMs) }));
  }

  private fold(map: Map<string, Average>, key: string, useful: number, at: number): void {
    const old = map.get(key);
    const before = old ? this.decayed(old, at) : NEUTRAL;
    map.set(key, { value: (1 - this.alpha) * before + this.alpha * useful, at, signals: (old?.signals ?? 0) + 1 });
  }

  /** The average as of `now`: drifted toward neutral for the time since its last signal. */
  private decayed(a: Average, now: number): number {
    return NEUTRAL + (a.value - NEUTRAL) * Math.pow(0.5, Math.max(0, now - a.at) / this.halfLifeMs);
  }

  /** An entry's effectiveness now and its signal count, or undefined when it was never rated. */
  of(entryId: string, now = Date.now()): { value: number; signals: number } | undefined {
    const a = this.entries.get(entryId);
    return a && { value: this.decayed(a, now), signals: a.signals };
  }

  /**
   * What ratings say about an entry for ranking: its own effectiveness when it was rated; else its
   * source's, counted at half; else its core's, at a quarter (`share`). Undefined when none was rated.
   */
  forRanking(
    entryId: string,
    source: string | null,
    coreId: string,
    now = Date.now(),
  ): { value: number; signals: number; of: 'entry' | 'source' | 'core'; share: number } | undefined {
    const pick = (a: Average | undefined, of: 'entry' | 'source' | 'core', share: number) =>
      a && { value: this.decayed(a, now), signals: a.signals, of, share };
    return (
      pick(this.entries.get(entryId), 'entry', 1) ??
      pick(source === null ? undefined : this.sources.get(source), 'source', 0.5) ??
      pick(this.cores.get(coreId), 'core', 0.25)
    );
  }

  /** Every rated entry, source and core with its effectiveness now. */
  report(now = Date.now()): Record<'entries' | 'sources' | 'cores', { id: string; value: number; signals: number }[]> {
    const list = (m: Map<string, Average>) =>
      [...m]
        .map(([id, a]) => ({ id, value: this.decayed(a, now), signals: a.signals }))
        .sort((a, b) => a.value - b.value || a.id.localeCompare(b.id));
    return { entries: list(this.entries), sources: list(this.sources), cores: list(this.cores) };
  }
}

/** The signals kept in the folder (a line cut short by a crash is skipped: its write is replayed from the journal). */
export async function readSignals(dir: string): Promise<FeedbackSignal[]> {
  let text: string;
  try {
    text = await readFile(join(dir, FILE), 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').flatMap((line): FeedbackSignal[] => {
    if (line.trim() === '') return [];
    try {
      const s = JSON.parse(line) as FeedbackSignal;
      return typeof s.key === 'string' && typeof s.entryId === 'string' && typeof s.useful === 'number' ? [s] : [];
    } catch {
      return [];
    }
  });
}

/**
 * Adds signals whose key the folder does not hold yet; returns those added. `held`: the keys the
 * folder holds, when the caller knows them (a live write appends); without, the file is read and
 * rewritten whole (a journal replay, which may find its signals written already, or a line cut short).
 */
export async function writeSignals(dir: string, signals: readonly FeedbackSignal[], held?: ReadonlySet<string>): Promise<FeedbackSignal[]> {
  const path = join(dir, FILE);
  if (held) {
    const added = signals.filter((s) => !held.has(s.key));
    if (added.length > 0) await appendFile(path, added.map((s) => `${JSON.stringify(s)}\n`).join(''));
    return added;
  }
  const kept = await readSignals(dir);
  const keys = new Set(kept.map((s) => s.key));
  const added = signals.filter((s) => !keys.has(s.key));
  await writeFile(`${path}.tmp`, [...kept, ...added].map((s) => `${JSON.stringify(s)}\n`).join(''));
  await rename(`${path}.tmp`, path);
  return added;
}
