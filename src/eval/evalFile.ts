import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { MemoryFileError } from '../model/errors.js';
import { parseMemoryText, formatOf } from '../ingest/loadMemoryFile.js';

export interface EvalQuery {
  id: string;
  text: string;
  cores?: string[];
  gold: string[];
  category?: string | number;
}

/** A memory document (memory file format) plus queries with gold entry ids. */
export interface EvalFile {
  name?: string;
  queries: EvalQuery[];
  [memoryFileKey: string]: unknown;
}

const schema = JSON.parse(readFileSync(new URL('../../schema/eval-file.schema.json', import.meta.url), 'utf8')) as object;
const validate = new Ajv({ strict: false }).compile(schema);

/** Checks the queries part; the memory part is checked by the ingest path. */
export function checkEvalFile(file: string, data: unknown): EvalFile {
  if (!validate(data)) {
    const e = validate.errors![0]!;
    const m = /^\/queries\/(\d+)(?:\/(.*))?$/.exec(e.instancePath);
    const missing = e.keyword === 'required' ? String((e.params as { missingProperty: string }).missingProperty) : null;
    const field = missing ?? (m ? m[2] ?? null : e.instancePath.slice(1) || null);
    throw new MemoryFileError(file, m ? `queries[${m[1]}]` : null, field, missing ? 'is required' : e.message ?? 'is invalid');
  }
  const ids = new Set<string>();
  (data as EvalFile).queries.forEach((q, i) => {
    if (ids.has(q.id)) throw new MemoryFileError(file, `queries[${i}]`, 'id', `duplicate query id "${q.id}"`);
    ids.add(q.id);
  });
  return data as EvalFile;
}

export async function loadEvalFile(file: string): Promise<EvalFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new MemoryFileError(file, null, null, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const format = formatOf(file);
  if (format === 'jsonl') throw new MemoryFileError(file, null, null, 'an eval file is JSON or YAML');
  return checkEvalFile(file, parseMemoryText(file, text, format).raw);
}

/** The memory part of an eval file, for ingest. */
export function memoryPart(e: EvalFile): Record<string, unknown> {
  const { name: _name, queries: _queries, ...memory } = e;
  return memory;
}
