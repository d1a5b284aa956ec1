/**
 * What memory could not answer: every task whose bundle came back empty or low-confidence, or
 * whose every entry an agent rated not useful (from a bundle this process handed out), is
 * appended to `<db>/gaps.jsonl` (time, task, cores, why). `memcore gaps` lists them with similar
 * tasks grouped, which is the list of lessons nobody has written yet. One JSON line per task,
 * appended (a line is written whole or not at all); lines past the retention are dropped when the
 * log is read.
 */
import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { cosineSimilarity, type Embedder } from '../embed/embedder.js';
import type { ContextBundle } from '../model/types.js';
import { DEFAULTS } from '../config/defaults.js';

export interface GapRecord {
  /** ISO time the task was asked. */
  at: string;
  task: string;
  /** The cores the task was asked of (null: all). */
  cores: string[] | null;
  /** The bundle was empty, low-confidence, or every entry of it was rated not useful. */
  why: 'empty' | 'low-confidence' | 'rated-not-useful';
  /** The best entry's score, when there was one. */
  bestScore: number | null;
}

export interface GapGroup {
  /** The most recent task of the group, standing for it. */
  task: string;
  /** How many times tasks of the group were asked. */
  count: number;
  lastAt: string;
  tasks: GapRecord[];
}

export interface GapLogOptions {
  /** Log tasks memory could not answer. Default true (config `gaps.log`, MEMCORE_GAPS_LOG). */
  enabled?: boolean;
  /** Days a logged task is kept. Default 90 (config `gaps.retentionDays`). */
  retentionDays?: number;
}

/** Characters of a task the log keeps. */
const LOGGED_TASK_CHARS = 2_000;
/** Tasks at least this similar (cosine of their embeddings) are one gap. */
const SAME_GAP = 0.8;
const FILE = 'gaps.jsonl';

export class GapLog {
  /** Bundles this process handed out lately, for ratings that make a task unanswered. */
  private readonly recent = new LRUCache<string, { bundle: ContextBundle; cores: string[] | undefined; notUseful: Set<string> }>({
    max: 1_000,
  });
  private readonly enabled: boolean;
  private readonly retentionMs: number;

  constructor(
    private readonly dir: string,
    options: GapLogOptions = {},
  ) {
    this.enabled = options.enabled !== false;
    this.retentionMs = (options.retentionDays ?? DEFAULTS.gaps.retentionDays) * 86_400_000;
  }

  /**
   * Logs the bundle's task when memory could not answer it; never fails the read that asked, nor
   * waits for the line to be written (an append is a few file operations, ~0.2 ms or more of every
   * weak answer's wait): lines are written in order, before the log is read and before `settled`.
   */
  record(bundle: ContextBundle, cores: string[] | undefined): void {
    // Kept with the log off too: a rating from the bundle is given for its task (taskOf).
    if (bundle.bundleId && bundle.entries.length > 0 && !this.recent.has(bundle.bundleId))
      this.recent.set(bundle.bundleId, { bundle, cores, notUseful: new Set() });
    if (!this.enabled) return;
    const why = bundle.entries.length === 0 ? 'empty' : bundle.lowConfidence ? 'low-confidence' : null;
    if (why) void this.append(bundle, cores, why);
  }

  /** Appends and reads of the file, one after another (a read that drops old lines rewrites it). */
  private queue: Promise<unknown> = Promise.resolve();

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every line logged so far is written (the engine's close waits for it). */
  async settled(): Promise<void> {
    await this.queue;
  }

  /**
   * Hears a rating from a bundle this log saw: once every entry of the bundle was rated not useful
   * (below 0.5), its task is logged as not answered.
   */
  /** The task of a bundle this process handed out lately. */
  taskOf(bundleId: string): string | undefined {
    return this.recent.get(bundleId)?.bundle.task;
  }

  async rated(bundleId: string, entryId: string, useful: number): Promise<void> {
    const seen = this.recent.get(bundleId);
    if (!seen || useful >= 0.5 || !this.enabled) return;
    seen.notUseful.add(entryId);
    if (seen.bundle.entries.every((e) => seen.notUseful.has(e.entry.id))) {
      this.recent.delete(bundleId);
      await this.append(seen.bundle, seen.cores, 'rated-not-useful');
    }
  }

  private async append(bundle: ContextBundle, cores: string[] | undefined, why: GapRecord['why']): Promise<void> {
    const record: GapRecord = {
      at: new Date().toISOString(),
      task: bundle.task.slice(0, LOGGED_TASK_CHARS),
      cores: cores ?? null,
      why,
      bestScore: bundle.entries[0]?.score ?? null,
    };
    await this.inTurn(() => appendFile(join(this.dir, FILE), `${JSON.stringify(record)}\n`).catch(() => undefined));
  }

  /** Logged tasks since `since` (default: all kept), oldest first; expired lines are dropped from the file. */
  read(since?: Date): Promise<GapRecord[]> {
    return this.inTurn(() => this.readNow(since));
  }

  private async readNow(since?: Date): Promise<GapRecord[]> {
    const path = join(this.dir, FILE);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return [];
    }
    const cutoff = Date.now() - this.retentionMs;
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    // A line cut short by a crash, or edited by hand into something else, is skipped, not fatal.
    const records = lines.flatMap((l): GapRecord[] => {
      try {
        const r = JSON.parse(l) as GapRecord;
        return typeof r.task === 'string' && typeof r.at === 'string' ? [r] : [];
      } catch {
        return [];
      }
    });
    const kept = records.filter((r) => Date.parse(r.at) >= cutoff);
    if (kept.length < lines.length) {
      await writeFile(`${path}.tmp`, kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
      await rename(`${path}.tmp`, path);
    }
    return since ? kept.filter((r) => Date.parse(r.at) >= since.getTime()) : kept;
  }
}

/** Groups logged tasks by the similarity of their embeddings: each group is one missing piece of knowledge. */
export async function groupGaps(records: GapRecord[], embedder: Embedder): Promise<GapGroup[]> {
  if (records.length === 0) return [];
  const tasks = [...new Set(records.map((r) => r.task))];
  const vectors = new Map((await embedder.embed(tasks)).map((v, i) => [tasks[i]!, v]));
  const groups: { vector: Float32Array; records: GapRecord[] }[] = [];
  for (const r of [...records].reverse()) {
    const v = vectors.get(r.task)!;
    const home = groups.find((g) => cosineSimilarity(g.vector, v) >= SAME_GAP);
    if (home) home.records.push(r);
    else groups.push({ vector: v, records: [r] });
  }
  return groups
    .map((g) => ({ task: g.records[0]!.task, count: g.records.length, lastAt: g.records[0]!.at, tasks: g.records }))
    .sort((a, b) => b.count - a.count || b.lastAt.localeCompare(a.lastAt));
}
