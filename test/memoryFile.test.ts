import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMemoryFile } from '../src/ingest/loadMemoryFile.js';
import { deriveEntryId, validateMemoryDocument } from '../src/model/memoryFile.js';
import { MemoryFileError } from '../src/index.js';
import { tempDir } from './helpers.js';

const entry = (over: Record<string, unknown> = {}) => ({ id: 'e1', core_id: 'c', title: 'T', content: 'C', ...over });

function problem(doc: unknown): MemoryFileError {
  try {
    validateMemoryDocument('mem.json', doc);
  } catch (e) {
    expect(e).toBeInstanceOf(MemoryFileError);
    return e as MemoryFileError;
  }
  throw new Error('expected a MemoryFileError');
}

describe('memory file validation', () => {
  it('fills defaults and derives stable ids', () => {
    const { document } = validateMemoryDocument('mem.json', {
      core_id: 'auth',
      entries: [{ title: 'Rotate tokens', content: 'x' }],
      code_locations: [{ codebase_id: 'api', file_path: 'src/a.ts', symbol: 'f', start_line: 3, end_line: 9 }],
    });
    const e = document.entries[0]!;
    expect(e).toMatchObject({ coreId: 'auth', entryType: 'fact', confidence: 'medium', importance: 5, sensitivity: 'internal', tags: [] });
    expect(e.id).toBe(deriveEntryId('auth', 'Rotate tokens'));
    expect(document.codeLocations[0]!.id).toBe('api:src/a.ts#f:3-9');
  });

  it('names file, record and field for a bad enum value', () => {
    const err = problem({ entries: [entry(), entry({ id: 'e2', confidence: 'certain' })] });
    expect(err.message).toBe('mem.json: entries[1] (id "e2"): field "confidence": must be one of "low", "medium", "high"');
    expect([err.file, err.record, err.field]).toEqual(['mem.json', 'entries[1] (id "e2")', 'confidence']);
  });

  it('rejects unknown fields, missing fields, bad ranges and dates', () => {
    expect(problem({ entries: [entry({ titel: 'x' })] }).message).toMatch(/entries\[0\].*field "titel": is not a known field/);
    expect(problem({ entries: [{ id: 'x', core_id: 'c', content: 'C' }] }).message).toMatch(/field "title": is required/);
    expect(problem({ entries: [entry({ importance: 11 })] }).message).toMatch(/field "importance": must be <= 10/);
    expect(problem({ entries: [entry({ valid_to: 'yesterday' })] }).message).toMatch(/field "valid_to": is not an ISO 8601 date/);
    expect(problem({ entries: [entry({ valid_from: '2025-02-01', valid_to: '2025-01-01' })] }).field).toBe('valid_to');
    expect(problem({ entries: [{ title: 'a', content: 'b' }] }).message).toMatch(/core_id.*is required/);
    expect(problem({ entries: [entry({ title: '   ' })] }).field).toBe('title');
    expect(problem([]).message).toMatch(/must hold an object/);
  });

  it('rejects duplicate ids, self-loops and fields that do not belong to a relation type', () => {
    expect(problem({ entries: [entry(), entry()] }).message).toMatch(/duplicate id "e1"/);
    expect(problem({ entries: [entry()], relations: [{ type: 'RELATED', from: 'e1', to: 'e1' }] }).message).toMatch(/own source/);
    const err = problem({
      entries: [entry(), entry({ id: 'e2' })],
      relations: [{ type: 'DEPENDS_ON', from: 'e1', to: 'e2', relevance: 0.5 }],
    });
    expect(err.message).toMatch(/relations\[0\] \(DEPENDS_ON "e1" → "e2"\): field "relevance": does not apply to DEPENDS_ON/);
    expect(problem({ relations: [{ type: 'LIKES', from: 'a', to: 'b' }] }).field).toBe('type');
    expect(problem({ code_locations: [{ codebase_id: 'x', file_path: 'f', start_line: 9, end_line: 3 }] }).field).toBe('end_line');
    expect(
      problem({
        golden_paths: [
          {
            id: 'g',
            name: 'n',
            steps: [
              { code: 'a', step_order: 1 },
              { code: 'b', step_order: 1 },
            ],
          },
        ],
      }).field,
    ).toBe('step_order');
  });

  it('lists endpoints that the file does not define, for the store to check', () => {
    const { external, document } = validateMemoryDocument('m', {
      entries: [entry()],
      golden_paths: [{ id: 'g', name: 'G', steps: [{ code: 'elsewhere' }] }],
      relations: [
        { type: 'REFERENCES_CODE', from: 'e1', to: 'code-x' },
        { type: 'IMPLEMENTS', from: 'e1', to: 'g' },
      ],
    });
    expect(external.map((x) => [x.kind, x.id, x.field])).toEqual([
      ['code', 'elsewhere', 'code'],
      ['code', 'code-x', 'to'],
    ]);
    expect(document.relations.find((r) => r.type === 'PATH_STEP')).toMatchObject({ from: 'g', to: 'elsewhere', stepOrder: 1 });
  });
});

describe('memory file formats', () => {
  it('reads JSON, YAML and JSONL to the same document', async () => {
    const dir = await tempDir();
    const doc = { entries: [entry()], relations: [] };
    await writeFile(join(dir, 'm.json'), JSON.stringify(doc));
    await writeFile(join(dir, 'm.yaml'), 'entries:\n  - { id: e1, core_id: c, title: T, content: C }\n');
    await writeFile(join(dir, 'm.jsonl'), JSON.stringify({ kind: 'entry', ...entry() }) + '\n\n');
    const docs = await Promise.all(['m.json', 'm.yaml', 'm.jsonl'].map((f) => loadMemoryFile(join(dir, f))));
    expect(docs[1]).toEqual(docs[0]);
    expect(docs[2]).toEqual(docs[0]);
  });

  it('reports malformed files with the file and line', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'bad.json'), '{"entries": [');
    await writeFile(join(dir, 'bad.yaml'), 'entries:\n  - title: [unclosed\n');
    await writeFile(join(dir, 'bad.jsonl'), JSON.stringify({ kind: 'entry', ...entry() }) + '\n{oops\n');
    await writeFile(join(dir, 'kind.jsonl'), JSON.stringify({ kind: 'note', ...entry() }) + '\n');
    await writeFile(join(dir, 'enum.jsonl'), '\n' + JSON.stringify({ kind: 'entry', ...entry({ sensitivity: 'top' }) }) + '\n');
    await writeFile(join(dir, 'm.txt'), '');
    await expect(loadMemoryFile(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json: not valid JSON/);
    await expect(loadMemoryFile(join(dir, 'bad.yaml'))).rejects.toThrow(/bad\.yaml: line \d+: not valid YAML/);
    await expect(loadMemoryFile(join(dir, 'bad.jsonl'))).rejects.toThrow(/bad\.jsonl: line 2: not valid JSON/);
    await expect(loadMemoryFile(join(dir, 'kind.jsonl'))).rejects.toThrow(/line 1: field "kind": must be one of/);
    await expect(loadMemoryFile(join(dir, 'enum.jsonl'))).rejects.toThrow(/enum\.jsonl: line 2 \(id "e1"\): field "sensitivity"/);
    await expect(loadMemoryFile(join(dir, 'm.txt'))).rejects.toThrow(/unknown file type "\.txt"/);
    await expect(loadMemoryFile(join(dir, 'missing.json'))).rejects.toThrow(/missing\.json: cannot be read \(ENOENT\)/);
  });
});
