/**
 * npx tsx examples/quickstart.ts — the library API in one page: open a database, write memory,
 * ask for task context, look up code and golden paths.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatBundle, openMemory } from '../src/index.js';

const dir = await mkdtemp(join(tmpdir(), 'memcore-quickstart-'));
const memory = await openMemory({ path: dir }); // offline local embedder by default

try {
  // Records use the memory file format (the same as `memcore ingest` reads).
  await memory.ingestDocument({
    core_id: 'payments',
    entries: [
      {
        id: 'pay-idempotency',
        title: 'Charge requests carry an Idempotency-Key',
        content: 'The payment provider deduplicates on the key for 24 hours; retries reuse it.',
        entry_type: 'decision',
        confidence: 'high',
        importance: 9,
        tags: ['payments', 'retries'],
      },
      {
        id: 'pay-retry-lesson',
        title: 'A retried charge without a key billed customers twice',
        content: 'Timeouts do not mean failure: the first charge had gone through.',
        entry_type: 'lesson',
      },
    ],
    code_locations: [
      { id: 'charge-fn', codebase_id: 'shop', file_path: 'src/payments/charge.ts', symbol: 'charge', start_line: 10, end_line: 42 },
    ],
    golden_paths: [
      { id: 'gp-charge', name: 'Charging a card', steps: [{ code: 'charge-fn', description: 'build the request with its key' }] },
    ],
    relations: [
      { type: 'DEPENDS_ON', from: 'pay-retry-lesson', to: 'pay-idempotency' },
      { type: 'REFERENCES_CODE', from: 'pay-idempotency', to: 'charge-fn', relevance: 0.9 },
      { type: 'IMPLEMENTS', from: 'pay-idempotency', to: 'gp-charge' },
    ],
  });

  const bundle = await memory.buildTaskContext('add automatic retries to the charge call', { maxEntries: 5, depth: 2 });
  console.log(formatBundle(bundle));

  for (const hit of await memory.findByCodeReference({ filePath: 'payments/' })) {
    console.log(`${hit.code.filePath}:${hit.code.startLine}-${hit.code.endLine} ← ${hit.entry.title}`);
  }
  console.log((await memory.getGoldenPath('gp-charge'))?.steps.map((s) => `${s.order}. ${s.code.filePath}`).join('\n'));

  // What the team already wrote: each heading section an entry, ADRs decisions, CLAUDE.md conventions.
  const imported = await memory.importMarkdown([fileURLToPath(new URL('./import-docs', import.meta.url))], { core: 'project' });
  console.log(`${imported.files.imported} documents imported: ${imported.entries.added} entries, ${imported.relations} relations`);
  for (const e of await memory.listEntries({ cores: ['project'], entryTypes: ['decision'] }))
    console.log(`[decision] ${e.title} (${e.source})`);

  // The code for a task: import a folder of code, then rank its files and symbols (findCode).
  await memory.importCode(fileURLToPath(new URL('../src/text', import.meta.url)), { codebase: 'memcore' });
  for (const hit of await memory.findCode('split camelCase identifiers into words', { limit: 3 }))
    console.log(`${hit.code.filePath}${hit.code.symbol ? `#${hit.code.symbol}` : ''} ← ${hit.why.join('; ')}`);
} finally {
  await memory.close();
  await rm(dir, { recursive: true, force: true });
}
