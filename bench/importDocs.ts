/**
 * npm run bench:import [-- --docs 1000 --sections 4]
 * `memcore import` of a generated docs tree with the offline model: the first import (parse,
 * embed, write), a re-import with nothing changed, and a re-import after one section changed.
 * Prints a table and writes bench/results/import-<docs>.json.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMemory } from '../src/index.js';
import { benchOptions } from './synthetic.js';

const USAGE = `usage: npm run bench:import -- [--docs 1000] [--sections 4] [--out <name>]

  --docs <n>      documents in the tree, 1 to 100000 (default 1000); one in ten is a decision record
  --sections <n>  heading sections a document, 1 to 50 (default 4), ~60 words each
  --out <name>    bench/results/<name>.json (default import-<docs>)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;
const values = benchOptions(
  USAGE,
  { docs: { type: 'string', default: '1000' }, sections: { type: 'string', default: '4' }, out: { type: 'string' } },
  (v) =>
    Number.isInteger(Number(v.docs)) &&
    Number(v.docs) >= 1 &&
    Number(v.docs) <= 100_000 &&
    Number.isInteger(Number(v.sections)) &&
    Number(v.sections) >= 1 &&
    Number(v.sections) <= 50,
);
const docs = Number(values.docs);
const sections = Number(values.sections);
const WORDS =
  'token refresh rotation family revoke session cookie database migration column index lock retry payment idempotency key header version contract deprecation sunset error problem json logging trace queue worker cache eviction schema'.split(
    ' ',
  );
const words = (seed: number, n: number) =>
  Array.from({ length: n }, (_, j) => WORDS[(seed * 7 + j * 13 + (seed >> 3)) % WORDS.length]).join(' ');

function document(i: number): { path: string; text: string } {
  if (i % 10 === 9) {
    const n = String(i).padStart(5, '0');
    return {
      path: `adr/${n}-decision-${i}.md`,
      text: `# ADR ${i}: decide ${words(i, 4)}\n\n## Status\n\nAccepted.${i > 19 ? ` Supersedes ADR-${i - 10}.` : ''}\n\n## Context\n\n${words(i, 60)} #${i}\n\n## Decision\n\n${words(i + 1, 40)}\n`,
    };
  }
  const body = Array.from(
    { length: sections },
    (_, s) => `## Topic ${s} of guide ${i}\n\n${words(i * 31 + s, 60)} (guide ${i}, topic ${s}; see [the next](guide-${i + 1}.md)).\n`,
  ).join('\n');
  return { path: `guides/part-${i % 20}/guide-${i}.md`, text: `---\ntags: [guide]\n---\n# Guide ${i}\n\n${body}` };
}

const root = await mkdtemp(join(tmpdir(), 'memcore-bench-import-'));
const tree = join(root, 'docs');
try {
  for (let i = 0; i < docs; i++) {
    const { path, text } = document(i);
    await mkdir(join(tree, path, '..'), { recursive: true });
    await writeFile(join(tree, path), text);
  }
  const memory = await openMemory({ path: join(root, '.memcore'), env: {} });
  const rows: { run: string; seconds: number; entries: number; embedded: number; perSecond: number }[] = [];
  const measure = async (run: string) => {
    const t = performance.now();
    const r = await memory.importMarkdown([tree], {
      onProgress: process.stderr.isTTY ? (m) => process.stderr.write(`\r${run}: ${m}   `) : undefined,
    });
    const seconds = (performance.now() - t) / 1000;
    const entries = r.entries.added + r.entries.updated + r.entries.unchanged;
    rows.push({ run, seconds, entries, embedded: r.embedded, perSecond: entries / seconds });
    process.stderr.write(
      `\n${run}: ${seconds.toFixed(1)} s, ${entries} entries, ${r.embedded} embedded, ${r.relations} relations, ${r.failed.length} failed\n`,
    );
  };
  await measure('first import');
  await measure('again, nothing changed');
  await writeFile(join(tree, document(0).path), document(0).text.replace('topic 0;', 'topic 0, edited;'));
  await measure('again, one section changed');
  await memory.close();

  console.log(`\nmemcore import of ${docs} documents (${sections} sections a guide), offline model, ${availableParallelism()} cores\n`);
  console.log('| run | seconds | entries | embedded | entries/s |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.run} | ${r.seconds.toFixed(1)} | ${r.entries} | ${r.embedded} | ${r.perSecond.toFixed(0)} |`);
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, `${values.out ?? `import-${docs}`}.json`),
    JSON.stringify({ date: new Date().toISOString(), docs, sections, cores: availableParallelism(), rows }, null, 2) + '\n',
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
process.exit(0);
