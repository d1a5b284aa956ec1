/**
 * What memory says about a change: `npx tsx examples/diff-lessons.ts [<range>] [--db <dir>]`.
 * The range defaults to `HEAD` (everything not yet committed); `main...HEAD` gives the current
 * branch's changes. As a CI step or pre-commit hook it prints and never fails the build.
 */
import { parseArgs } from 'node:util';
import { openMemory } from '../src/index.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { db: { type: 'string', default: '.memcore' } } });
const range = positionals[0] ?? 'HEAD';
const memory = await openMemory({ path: values.db });
try {
  const bundle = await memory.contextForDiff({ repo: process.cwd(), range }, { maxEntries: 8 });
  for (const c of bundle.changes) console.log(`changed: ${c.change} ${c.path}${c.symbols.length > 0 ? ` (${c.symbols.join(', ')})` : ''}`);
  console.log('');
  for (const { entry, why } of bundle.entries) {
    const code = why.find((r) => r.kind === 'code');
    console.log(`[${entry.entryType}] ${entry.title}${code?.kind === 'code' ? `  ← ${code.code}` : ''}`);
  }
  for (const path of bundle.goldenPaths) console.log(`golden path: ${path.name}`);
} catch (e) {
  console.error(`no lessons: ${(e as Error).message}`);
} finally {
  await memory.close();
}
