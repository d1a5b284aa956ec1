import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
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
  /** The text is a unified diff (contextForDiff). */
  diff?: boolean;
}

/** A memory document (memory file format) plus queries with gold entry ids. */
export interface EvalFile {
  name?: string;
  /** A memory file to use as the memory part (resolved against the eval file's folder by loadEvalFile). */
  memory?: string;
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
    const field = missing ?? (m ? (m[2] ?? null) : e.instancePath.slice(1) || null);
    throw new MemoryFileError(file, m ? `queries[${m[1]}]` : null, field, missing ? 'is required' : (e.message ?? 'is invalid'));
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
  const evalFile = checkEvalFile(file, parseMemoryText(file, text, format).raw);
  if (evalFile.memory === undefined) return evalFile;
  const own = Object.keys(memoryPart(evalFile));
  if (own.length > 0)
    throw new MemoryFileError(
      file,
      null,
      'memory',
      `names a memory file, so the eval file holds no memory of its own (found ${own.join(', ')})`,
    );
  const path = resolve(dirname(file), evalFile.memory);
  let memoryText: string;
  try {
    memoryText = await readFile(path, 'utf8');
  } catch (e) {
    throw new MemoryFileError(
      file,
      null,
      'memory',
      `${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  const memory = parseMemoryText(path, memoryText, formatOf(path)).raw;
  if (memory === null || typeof memory !== 'object' || Array.isArray(memory))
    throw new MemoryFileError(path, null, null, 'must hold an object with entries, code_locations, golden_paths or relations');
  const { version: _version, ...records } = memory as Record<string, unknown>;
  return { ...records, name: evalFile.name ?? path, queries: evalFile.queries };
}

/** The memory part of an eval file, for ingest. */
export function memoryPart(e: EvalFile): Record<string, unknown> {
  const { name: _name, queries: _queries, memory: _file, ...memory } = e;
  return memory;
}
