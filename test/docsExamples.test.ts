/**
 * The memory-file examples of the docs are memory files: every ```yaml / ```json block of
 * README.md and docs/*.md that holds memory-file sections (and is not an eval file) is ingested
 * into a real store, and what it holds is there afterwards.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { tempDir, withEngine } from './helpers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const SECTIONS = ['entries', 'code_locations', 'golden_paths', 'relations'];

interface Example {
  where: string;
  lang: string;
  value: Record<string, unknown[]>;
  text: string;
}

function examples(): Example[] {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const found: Example[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(yaml|json)\s*$/.exec(lines[i]!);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
      const text = lines.slice(i + 1, end).join('\n');
      const value: unknown = open[1] === 'json' ? JSON.parse(text) : parse(text);
      i = end;
      if (typeof value !== 'object' || value === null || 'queries' in value) continue; // eval files: another format
      if (SECTIONS.some((s) => s in value))
        found.push({ where: `${file}:${i + 1}`, lang: open[1]!, value: value as Record<string, unknown[]>, text });
    }
  }
  return found;
}

describe('the docs', () => {
  it('memory-file examples ingest as they are, and hold what they show', async () => {
    const found = examples();
    expect(found.map((e) => e.where.split(':')[0])).toContain('docs/memory-file.md');
    for (const example of found) {
      const dir = await tempDir();
      const file = join(dir, `example.${example.lang}`);
      await writeFile(file, example.text);
      await withEngine(join(dir, 'db'), async (memory) => {
        const report = await memory.ingest(file).catch((e: Error) => {
          throw new Error(`${example.where}: ${e.message}`);
        });
        const entries = (example.value.entries ?? []).length;
        expect(report.entries.added, example.where).toBe(entries);
        expect(report.goldenPaths, example.where).toBe((example.value.golden_paths ?? []).length);
        expect(report.codeLocations, example.where).toBe((example.value.code_locations ?? []).length);
        const ids = (example.value.entries ?? []).map((e) => (e as { id?: string }).id).filter((id) => id !== undefined);
        expect((await memory.getEntries(ids)).map((e) => e.id).sort(), example.where).toEqual([...ids].sort());
      });
    }
  });
});
