/**
 * npm run bench:relevance [-- --sizes 10,100 --db-root /tmp/evdb --data-root ../shared/eval-data]
 *
 * "No relevant memory" measured (docs/pipeline.md): how often an on-topic task is hidden ("nothing
 * relevant", or an empty bundle) and how often an off-topic one is marked (a weak match or nothing
 * relevant), at several store sizes, with the local model.
 *
 * - The example memory (examples/memory/orders-api.yaml, 44 entries): the 70 on-topic tasks of
 *   bench/relevance/orders-api-tasks.yaml (paraphrases, typos, extra words and numbers, tasks naming
 *   code) and the 32 off-topic tasks of bench/relevance/off-topic.yaml. Needs nothing else.
 * - Stores of `--sizes` entries built from the HotpotQA passages of the eval data, as many as it
 *   takes for --queries on-topic questions: each holds the gold passages of the next questions
 *   (on-topic there: their gold passages are all in the store), the rest passages no question
 *   needs; every store is asked the off-topic tasks too. Kept under --cache-dir, so a re-run
 *   embeds nothing. Skipped with a note when the eval data is not there.
 * - Stores of --sizes over 994 entries: the example memory, every HotpotQA passage, then 2Wiki and
 *   SciFact passages and their sentences (one entry each) up to the size (~80K), then LoCoMo's
 *   dialog turns, HotpotQA's sentences and windows of two adjacent sentences; on-topic there: the 70
 *   example tasks and the first --queries HotpotQA questions. Embedded with word-hash vectors
 *   (bench/synthetic.ts), since the local model would take hours on them.
 * - With --db-root: the stores `memcore eval <set> --keep-db <root>/<set>` leaves (hotpotqa ≈ 1K
 *   entries, locomo ≈ 3K, 2wiki ≈ 6K, scifact ≈ 5K), each with its first --queries questions
 *   on-topic and the same off-topic tasks.
 *
 * Prints a table and writes bench/results/<out>.json.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { ADAPTERS, DEFAULT_DATA_ROOT } from '../src/eval/adapters/index.js';
import { openMemory, type ContextBundle, type MemoryEngine } from '../src/index.js';
import type { EntryRecord } from '../src/model/memoryFile.js';
import { benchOptions, wordHashEmbedder } from './synthetic.js';

const USAGE = `usage: npm run bench:relevance -- [--sizes 10,100] [--data-root <dir>] [--cache-dir <dir>] [--db-root <dir>] [--queries 60] [--out <name>]

  --sizes <list>      sizes of the stores built from HotpotQA passages (default 10,100; none: no such stores)
                      (up to 994: several stores of a size, until --queries questions are on-topic;
                      above: one store of the example memory, HotpotQA and 2Wiki/SciFact passages and
                      sentences, then LoCoMo turns and sentence windows; word-hash vectors; at most 100000)
  --data-root <dir>   the eval data (default ../shared/eval-data beside the repository)
  --cache-dir <dir>   where the built stores are kept (default <tmp>/memcore-bench-relevance)
  --db-root <dir>     also the stores memcore eval <set> --keep-db <dir>/<set> left
  --queries <n>       on-topic questions a store, 1 to 10000 (default 60)
  --out <name>        bench/results/<name>.json (default relevance)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;
const values = benchOptions(
  USAGE,
  {
    sizes: { type: 'string', default: '10,100' },
    'data-root': { type: 'string' },
    'cache-dir': { type: 'string' },
    'db-root': { type: 'string' },
    queries: { type: 'string', default: '60' },
    out: { type: 'string' },
  },
  (v) =>
    (v.sizes === 'none' ||
      (/^\d+(,\d+)*$/.test(v.sizes ?? '') && v.sizes!.split(',').every((s) => Number(s) >= 2 && Number(s) <= 100_000))) &&
    Number.isInteger(Number(v.queries)) &&
    Number(v.queries) >= 1 &&
    Number(v.queries) <= 10_000,
);
const queriesPerStore = Number(values.queries);
const sizes = values.sizes === 'none' ? [] : values.sizes!.split(',').map(Number);
/** Stores up to this size are built of HotpotQA passages alone (it has 994) and embedded by the local model. */
const SMALL_STORE_MAX = 994;
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

interface Task {
  text: string;
  cores?: string[];
}
const onTopicExample = (YAML.parse(readFileSync(here('./relevance/orders-api-tasks.yaml'), 'utf8')) as { queries: Task[] }).queries;
const offTopic = (YAML.parse(readFileSync(here('./relevance/off-topic.yaml'), 'utf8')) as { tasks: string[] }).tasks.map((text) => ({
  text,
}));

/** What a bundle tells an agent: the entries (strong), weak matches, or nothing relevant (also an empty bundle). */
type Verdict = 'strong' | 'weak' | 'none';
const verdictOf = (b: ContextBundle): Verdict =>
  b.entries.length === 0 ? 'none' : b.lowConfidence ? (b.matchStrength === 'weak' ? 'weak' : 'none') : 'strong';

interface Row {
  store: string;
  entries: number;
  onTopic: number;
  /** On-topic tasks judged nothing relevant (or given an empty bundle): hidden. */
  hidden: number;
  /** On-topic tasks given as weak matches. */
  onWeak: number;
  offTopic: number;
  /** Off-topic tasks marked: weak matches or nothing relevant. */
  marked: number;
  /** Off-topic tasks judged nothing relevant (or an empty bundle). */
  offNone: number;
  /** Entries in the weak-match bundles of on-topic and of off-topic tasks (summed; over onWeak, offWeak for a mean). */
  onWeakEntries: number;
  offWeak: number;
  offWeakEntries: number;
  hiddenTasks: string[];
}

async function measure(store: string, memory: MemoryEngine, on: Task[]): Promise<Row> {
  const count = async (tasks: Task[], own: boolean) => {
    const verdicts: { text: string; verdict: Verdict; entries: number }[] = [];
    for (const t of tasks) {
      // Cores only for a store's own questions: another store's cores are not the task's.
      const bundle = await memory.buildTaskContext(t.text, own && t.cores ? { cores: t.cores } : {});
      verdicts.push({ text: t.text, verdict: verdictOf(bundle), entries: bundle.entries.length });
    }
    return verdicts;
  };
  const onV = await count(on, true);
  const offV = await count(offTopic, false);
  const row: Row = {
    store,
    entries: (await memory.stats()).entries,
    onTopic: on.length,
    hidden: onV.filter((v) => v.verdict === 'none').length,
    onWeak: onV.filter((v) => v.verdict === 'weak').length,
    offTopic: offTopic.length,
    marked: offV.filter((v) => v.verdict !== 'strong').length,
    offNone: offV.filter((v) => v.verdict === 'none').length,
    onWeakEntries: onV.reduce((n, v) => n + (v.verdict === 'weak' ? v.entries : 0), 0),
    offWeak: offV.filter((v) => v.verdict === 'weak').length,
    offWeakEntries: offV.reduce((n, v) => n + (v.verdict === 'weak' ? v.entries : 0), 0),
    hiddenTasks: onV.filter((v) => v.verdict === 'none').map((v) => v.text),
  };
  process.stderr.write(
    `${store}: ${row.entries} entries; on-topic hidden ${row.hidden}/${row.onTopic}, weak ${row.onWeak}; off-topic marked ${row.marked}/${row.offTopic}\n`,
  );
  return row;
}

const rows: Row[] = [];
const notes: string[] = [];

// 1. The example memory.
{
  const dir = await mkdtemp(join(tmpdir(), 'memcore-bench-relevance-'));
  const memory = await openMemory({ path: dir, env: {}, cache: { ttlMs: 0 } });
  try {
    await memory.ingest(here('../examples/memory/orders-api.yaml'));
    rows.push(await measure('example (orders-api)', memory, onTopicExample));
  } finally {
    await memory.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// 2. Stores of chosen sizes from the HotpotQA passages.
const dataRoot = resolve(values['data-root'] ?? DEFAULT_DATA_ROOT);
if (values.sizes === 'none') {
  // only the example memory and the kept stores
} else if (!existsSync(join(dataRoot, 'hotpotqa'))) {
  notes.push(`no eval data at ${dataRoot}: the stores of ${values.sizes} entries were skipped (--data-root)`);
} else {
  const file = await ADAPTERS.hotpotqa!.build({ data: join(dataRoot, 'hotpotqa') });
  const passages = file.entries as EntryRecord[];
  const gold = new Set(file.queries.flatMap((q) => q.gold));
  const filler = passages.filter((p) => !gold.has(p.id!));
  const cacheRoot = values['cache-dir'] ?? join(tmpdir(), 'memcore-bench-relevance');
  for (const size of sizes.filter((s) => s <= SMALL_STORE_MAX)) {
    // Stores of `size` entries until --queries questions are on-topic in one of them: each holds the
    // gold passages of the next questions that fit, then passages no question needs.
    const parts: Row[] = [];
    let next = 0;
    let fill = 0;
    for (let store = 0; next < file.queries.length && parts.reduce((n, r) => n + r.onTopic, 0) < queriesPerStore; store++) {
      const chosen = new Set<string>();
      const on: Task[] = [];
      for (; next < file.queries.length; next++) {
        const q = file.queries[next]!;
        const added = q.gold.filter((g) => !chosen.has(g));
        if (chosen.size + added.length > size) break;
        added.forEach((g) => chosen.add(g));
        on.push({ text: q.text });
      }
      if (on.length === 0) break; // a question needs more passages than the store holds
      while (chosen.size < size && fill < filler.length) chosen.add(filler[fill++]!.id!);
      const dir = join(cacheRoot, `hotpotqa-${size}-${store}`);
      const memory = await openMemory({ path: dir, env: {}, cache: { ttlMs: 0 } });
      try {
        await memory.ingestDocument({ entries: passages.filter((p) => chosen.has(p.id!)) }, { source: dir, autoLink: true });
        parts.push(await measure(`hotpotqa-${size}-${store}`, memory, on));
      } finally {
        await memory.close();
      }
    }
    rows.push({
      store: `${parts.length} stores of ${size} HotpotQA passages`,
      entries: size,
      onTopic: parts.reduce((n, r) => n + r.onTopic, 0),
      hidden: parts.reduce((n, r) => n + r.hidden, 0),
      onWeak: parts.reduce((n, r) => n + r.onWeak, 0),
      offTopic: parts.reduce((n, r) => n + r.offTopic, 0),
      marked: parts.reduce((n, r) => n + r.marked, 0),
      offNone: parts.reduce((n, r) => n + r.offNone, 0),
      onWeakEntries: parts.reduce((n, r) => n + r.onWeakEntries, 0),
      offWeak: parts.reduce((n, r) => n + r.offWeak, 0),
      offWeakEntries: parts.reduce((n, r) => n + r.offWeakEntries, 0),
      hiddenTasks: parts.flatMap((r) => r.hiddenTasks),
    });
  }
}

// 3. Large stores (over the 994 HotpotQA passages): the example memory and every HotpotQA passage, filled
//    up with the other eval sets' passages (2Wiki, SciFact), then their sentences, one entry each,
//    then LoCoMo's turns, HotpotQA's sentences and two-sentence windows (past ~80K).
//    Embedded with word-hash vectors (bench/synthetic.ts): the local model would take hours here, and
//    the judgement reads the words; the vectors only choose which candidates it looks at.
const large = sizes.filter((s) => s > SMALL_STORE_MAX);
if (large.length > 0 && !['hotpotqa', '2wiki', 'scifact'].every((set) => existsSync(join(dataRoot, set)))) {
  notes.push(`no eval data at ${dataRoot}: the stores of ${large.join(', ')} entries were skipped (--data-root)`);
} else if (large.length > 0) {
  const [hotpot, wiki, sci] = await Promise.all(
    ['hotpotqa', '2wiki', 'scifact'].map((set) => ADAPTERS[set]!.build({ data: join(dataRoot, set) })),
  );
  const example = YAML.parse(readFileSync(here('../examples/memory/orders-api.yaml'), 'utf8')) as { entries: EntryRecord[] };
  const passages = [...(wiki!.entries as EntryRecord[]), ...(sci!.entries as EntryRecord[])];
  const sentencesOf = (p: EntryRecord) => (p.content ?? '').split(/(?<=[.!?])\s+/u).filter((s) => s.split(/\s+/u).length >= 4);
  const sentenceEntries = (p: EntryRecord) =>
    sentencesOf(p).map((content, i) => ({
      id: `${p.id} #${i + 1}`,
      core_id: p.core_id,
      title: p.title,
      content,
      entry_type: 'fact' as const,
    }));
  const sentences = passages.flatMap(sentenceEntries);
  // Past what passages and their sentences give (~80K): LoCoMo's dialog turns, HotpotQA's
  // sentences, then windows of two adjacent sentences (as an overlapping chunker would cut them).
  // Appended after the rest, so the smaller stores hold what they held before.
  const locomo = existsSync(join(dataRoot, 'locomo')) ? (await ADAPTERS.locomo!.build({ data: join(dataRoot, 'locomo') })).entries : [];
  const hotpotSentences = (hotpot!.entries as EntryRecord[]).flatMap(sentenceEntries);
  const windows = [...passages, ...(hotpot!.entries as EntryRecord[])].flatMap((p) => {
    const all = sentencesOf(p);
    return all.slice(1).map((second, i) => ({
      id: `${p.id} #${i + 1}-${i + 2}`,
      core_id: p.core_id,
      title: p.title,
      content: `${all[i]!} ${second}`,
      entry_type: 'fact' as const,
    }));
  });
  const own = [...example.entries, ...(hotpot!.entries as EntryRecord[])];
  const on = [...onTopicExample, ...hotpot!.queries.slice(0, queriesPerStore).map((q) => ({ text: q.text }))];
  const cacheRoot = values['cache-dir'] ?? join(tmpdir(), 'memcore-bench-relevance');
  for (const size of large) {
    // A title both sets hold is one entry (the HotpotQA one).
    const taken = new Set(own.map((e) => e.id));
    const fill = [...passages, ...sentences, ...(locomo as EntryRecord[]), ...hotpotSentences, ...windows]
      .filter((e) => !taken.has(e.id) && taken.add(e.id!))
      .slice(0, Math.max(0, size - own.length));
    if (own.length + fill.length < size) notes.push(`the eval data gives ${own.length + fill.length} entries, not ${size}`);
    const dir = join(cacheRoot, `large-${size}`);
    const memory = await openMemory({ path: dir, env: {}, cache: { ttlMs: 0 }, embedder: wordHashEmbedder(512) });
    try {
      if ((await memory.stats()).entries === 0) {
        for (let i = 0; i < own.length + fill.length; i += 5_000) {
          const batch = [...own, ...fill].slice(i, i + 5_000);
          await memory.ingestDocument({ entries: batch }, { source: `${dir}#${i}`, autoLink: false });
        }
      }
      rows.push(await measure(`example memory and the eval sets' passages (word-hash vectors)`, memory, on));
    } finally {
      await memory.close();
    }
  }
}

// 4. Kept eval databases.
if (values['db-root']) {
  for (const set of Object.keys(ADAPTERS)) {
    const dir = join(values['db-root'], set);
    if (!existsSync(join(dir, 'meta.json'))) continue;
    const questions = (await ADAPTERS[set]!.build({ data: join(dataRoot, set) })).queries.slice(0, queriesPerStore);
    const memory = await openMemory({ path: dir, env: {}, cache: { ttlMs: 0 } });
    try {
      rows.push(await measure(`${set} (eval store)`, memory, questions));
    } finally {
      await memory.close();
    }
  }
}

const pct = (n: number, of: number) => (of === 0 ? '–' : ((100 * n) / of).toFixed(1));
console.log('\non-topic tasks hidden (nothing relevant or an empty bundle) and off-topic tasks marked (weak or nothing relevant), %\n');
console.log('(weak bundle: its mean entries, on-topic / off-topic tasks)\n');
console.log('| store | entries | on-topic | hidden | weak | off-topic | marked | nothing relevant | weak bundle |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
const mean = (n: number, of: number) => (of === 0 ? '–' : (n / of).toFixed(1));
for (const r of rows)
  console.log(
    `| ${r.store} | ${r.entries} | ${r.onTopic} | ${pct(r.hidden, r.onTopic)} | ${pct(r.onWeak, r.onTopic)} | ${r.offTopic} | ${pct(r.marked, r.offTopic)} | ${pct(r.offNone, r.offTopic)} | ${mean(r.onWeakEntries, r.onWeak)} / ${mean(r.offWeakEntries, r.offWeak)} |`,
  );
for (const r of rows)
  if (r.hiddenTasks.length > 0) console.log(`\n${r.store}, hidden: ${r.hiddenTasks.map((t) => JSON.stringify(t)).join(', ')}`);
for (const n of notes) console.log(`\nnote: ${n}`);
const dir = here('./results/');
await mkdir(dir, { recursive: true });
await writeFile(
  join(dir, `${values.out ?? 'relevance'}.json`),
  JSON.stringify({ date: new Date().toISOString(), queriesPerStore, rows, notes }, null, 2) + '\n',
);
process.exit(0);
