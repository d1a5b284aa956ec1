/**
 * `memcore export --to-files`: a folder's memory written as a team memory folder, one file per
 * entry and golden path, to commit (docs/team.md, "Starting from an existing folder"). Links found
 * by auto-linking are left out: the folder's sync finds them again.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemoryEngine } from '../engine/memoryEngine.js';
import type { CodeLocationRecord, RelationRecord } from '../model/memoryFile.js';
import { SENSITIVITY_LEVELS, type Confidence, type Sensitivity } from '../model/types.js';
import { entryFileText, pathFileText } from './entryFile.js';
import { writeFileAtomic } from './teamFolder.js';
import { fileNameOf } from './teamPaths.js';

const date = (v: string | undefined) => (v === undefined ? null : new Date(v));

function location(c: CodeLocationRecord) {
  return {
    filePath: c.file_path,
    symbol: c.symbol ?? null,
    startLine: c.start_line ?? null,
    endLine: c.end_line ?? c.start_line ?? null,
    codebaseId: c.codebase_id,
    language: c.language ?? null,
  };
}

export async function exportToFiles(
  engine: MemoryEngine,
  dir: string,
  options: { cores?: string[] } = {},
): Promise<{ dir: string; entries: number; goldenPaths: number; secret: number }> {
  const doc = await engine.exportMemory({ ...options, sensitivity: [...SENSITIVITY_LEVELS] });
  const codeById = new Map((doc.code_locations ?? []).map((c) => [c.id!, c]));
  const from = new Map<string, RelationRecord[]>();
  for (const r of doc.relations ?? []) from.set(r.from, [...(from.get(r.from) ?? []), r]);
  const localDir = `${dir}.local`;
  let secret = 0;
  const pathCore = new Map<string, string>();
  for (const e of doc.entries ?? []) {
    const relations = from.get(e.id!) ?? [];
    const links = relations
      .filter((r) => r.type !== 'REFERENCES_CODE' && r.type !== 'PATH_STEP' && !(r.type === 'RELATED' && r.kind === 'mention'))
      .map((r) => ({ type: r.type, to: r.to, ...(r.weight !== undefined ? { weight: r.weight } : {}) }));
    const code = relations
      .filter((r) => r.type === 'REFERENCES_CODE' && codeById.has(r.to))
      .map((r) => ({ ...location(codeById.get(r.to)!), ...(r.relevance !== undefined ? { relevance: r.relevance } : {}) }));
    for (const r of relations) if (r.type === 'IMPLEMENTS' && !pathCore.has(r.to)) pathCore.set(r.to, e.core_id!);
    const isSecret = e.sensitivity === 'secret';
    if (isSecret) secret++;
    const text = entryFileText(
      {
        id: e.id!,
        title: e.title,
        content: e.content,
        entryType: e.entry_type ?? 'fact',
        confidence: (e.confidence ?? 'medium') as Confidence,
        importance: e.importance ?? 5,
        tags: e.tags ?? [],
        aliases: e.aliases ?? [],
        sensitivity: (e.sensitivity ?? 'internal') as Sensitivity,
        pinned: e.pinned ?? false,
        source: e.source ?? null,
        createdAt: date(e.created_at),
        validFrom: date(e.valid_from),
        validTo: date(e.valid_to),
      },
      links,
      code,
    );
    await writeFileAtomic(join(isSecret ? localDir : dir, e.core_id!, `${fileNameOf(e.id!)}.md`), text);
  }
  if (secret > 0) await writeFile(join(localDir, '.gitignore'), '# memcore: secret entries stay on this machine\n*\n');
  for (const p of doc.golden_paths ?? []) {
    const steps = (from.get(p.id) ?? [])
      .filter((r) => r.type === 'PATH_STEP' && codeById.has(r.to))
      .sort((a, b) => (a.step_order ?? 0) - (b.step_order ?? 0))
      .map((r, i) => ({
        order: r.step_order ?? i + 1,
        description: r.description ?? null,
        keyConcepts: r.key_concepts ?? [],
        code: { id: r.to, kind: null, fingerprint: null, revision: null, ...location(codeById.get(r.to)!) },
      }));
    const text = pathFileText({ id: p.id, name: p.name, concept: p.concept ?? null, description: p.description ?? null, steps });
    await writeFileAtomic(join(dir, pathCore.get(p.id) ?? 'default', 'paths', `${fileNameOf(p.id)}.md`), text);
  }
  return { dir, entries: doc.entries?.length ?? 0, goldenPaths: doc.golden_paths?.length ?? 0, secret };
}
