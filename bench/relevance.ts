/**
 * npm run bench:relevance -- --db-root /tmp/evdb [--queries 100]
 * "No relevant memory" measured: each eval set's questions asked of every set's store. A question
 * asked of its own store is on-topic and should not be marked low-confidence; asked of another
 * store it is off-topic and should be. The stores are the folders `memcore eval <set> --keep-db
 * <root>/<set>` leaves (2wiki, hotpotqa, locomo, scifact; missing ones are skipped). Prints the
 * share of bundles marked low-confidence per store and question set, and writes
 * bench/results/relevance.json.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADAPTERS } from '../src/eval/adapters/index.js';
import { openMemory } from '../src/index.js';
import { benchOptions } from './synthetic.js';

const USAGE = `usage: npm run bench:relevance -- --db-root <dir> [--queries 100] [--out <name>]

  --db-root <dir>  folder holding <set>/ databases kept by memcore eval <set> --keep-db <dir>/<set>
  --queries <n>    questions a set, 1 to 10000 (default 100)
  --out <name>     bench/results/<name>.json (default relevance)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;
const values = benchOptions(
  USAGE,
  { 'db-root': { type: 'string' }, queries: { type: 'string', default: '100' }, out: { type: 'string' } },
  (v) => typeof v['db-root'] === 'string' && Number.isInteger(Number(v.queries)) && Number(v.queries) >= 1 && Number(v.queries) <= 10_000,
);
const sets = Object.keys(ADAPTERS);
const stores = sets.filter((s) => existsSync(join(values['db-root']!, s, 'meta.json')));
if (stores.length === 0) {
  console.error(`no eval databases under ${values['db-root']}; make them with memcore eval <set> --keep-db ${values['db-root']}/<set>`);
  process.exit(1);
}
const questions = Object.fromEntries(
  await Promise.all(sets.map(async (s) => [s, (await ADAPTERS[s]!.build({})).queries.slice(0, Number(values.queries))] as const)),
);

const rows: { store: string; questions: string; onTopic: boolean; lowConfidence: number; asked: number }[] = [];
for (const store of stores) {
  const memory = await openMemory({ path: join(values['db-root']!, store), env: {}, cache: { ttlMs: 0 } });
  for (const set of sets) {
    let low = 0;
    for (const q of questions[set]!) {
      // Cores only on the question's own store: another store's cores are not the question's.
      const bundle = await memory.buildTaskContext(q.text, { maxEntries: 8, ...(set === store && q.cores ? { cores: q.cores } : {}) });
      if (bundle.lowConfidence) low++;
    }
    rows.push({
      store,
      questions: set,
      onTopic: set === store,
      lowConfidence: low / questions[set]!.length,
      asked: questions[set]!.length,
    });
    process.stderr.write(`${store} ← ${set}: ${((100 * low) / questions[set]!.length).toFixed(0)}% low confidence\n`);
  }
  await memory.close();
}

console.log(`\nbundles marked low-confidence, % (rows: the store; columns: whose questions; on-topic in brackets)\n`);
console.log(`| store | ${sets.join(' | ')} |\n|---|${sets.map(() => '---').join('|')}|`);
for (const store of stores) {
  const cells = sets.map((set) => {
    const r = rows.find((x) => x.store === store && x.questions === set)!;
    const pct = (100 * r.lowConfidence).toFixed(0);
    return r.onTopic ? `[${pct}]` : pct;
  });
  console.log(`| ${store} | ${cells.join(' | ')} |`);
}
const dir = fileURLToPath(new URL('./results/', import.meta.url));
await mkdir(dir, { recursive: true });
await writeFile(
  join(dir, `${values.out ?? 'relevance'}.json`),
  JSON.stringify({ date: new Date().toISOString(), queries: Number(values.queries), rows }, null, 2) + '\n',
);
process.exit(0);
