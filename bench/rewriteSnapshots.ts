/**
 * Rewrites some snapshots of a kept bench database in the current format, loading each from the
 * snapshot it has (not building it): how a store written before a format addition (the keyword
 * index's term order, say) gets it without `memcore index` building everything at 1M entries.
 *
 *   tsx bench/rewriteSnapshots.ts <db folder> <structure…> (columns, keywords, names)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openMemory } from '../src/index.js';
import { lookupEmbedder } from './synthetic.js';

const [dir, ...keys] = process.argv.slice(2);
const known = ['columns', 'keywords', 'names'];
if (!dir || keys.length === 0 || keys.some((k) => !known.includes(k))) {
  console.error(`usage: tsx bench/rewriteSnapshots.ts <db folder> <${known.join('|')}>…`);
  process.exit(2);
}
// The store's own embedder id and size: the columns' snapshot is of them.
const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as { embedder: { id: string; dimensions: number } };
const embedder = { ...lookupEmbedder(new Map(), meta.embedder.dimensions), id: meta.embedder.id };
const m = await openMemory({ path: dir, embedder, env: {} });
const { stores } = m.unsafeExposeInternals();
const load: Record<string, () => Promise<unknown>> = {
  columns: () => stores.columns(),
  keywords: () => stores.keywords(),
  names: () => stores.names(),
};
for (const key of keys) await load[key]!();
const written = await stores.residents.writeSnapshots({ rewrite: true });
console.log(JSON.stringify({ written, resident: Object.fromEntries(stores.residents.loads) }));
await m.close();
