import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { MemoryFileError } from '../model/errors.js';
import { validateMemoryDocument, type ExternalReference, type MemoryDocument, type RecordNamer } from '../model/memoryFile.js';

const JSONL_SECTIONS: Record<string, string> = {
  entry: 'entries',
  code_location: 'code_locations',
  golden_path: 'golden_paths',
  relation: 'relations',
};

export type MemoryFileFormat = 'json' | 'jsonl' | 'yaml';

export function formatOf(file: string): MemoryFileFormat {
  const ext = extname(file).toLowerCase();
  if (ext === '.json') return 'json';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  throw new MemoryFileError(file, null, null, `unknown file type "${ext || '(none)'}": use .json, .jsonl or .yaml`);
}

/** JSONL: one record per line, `kind` says which section it belongs to; records are named by line. */
function parseJsonl(file: string, text: string): { raw: Record<string, unknown>; name: RecordNamer } {
  const raw: Record<string, unknown[]> = {};
  const lines: Record<string, number[]> = {};
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch (e) {
      throw new MemoryFileError(file, `line ${i + 1}`, null, `not valid JSON (${(e as Error).message})`);
    }
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) throw new MemoryFileError(file, `line ${i + 1}`, null, 'must be a JSON object');
    const { kind, ...fields } = rec as Record<string, unknown>;
    const section = typeof kind === 'string' ? JSONL_SECTIONS[kind] : undefined;
    if (!section) {
      throw new MemoryFileError(file, `line ${i + 1}`, 'kind', `must be one of ${Object.keys(JSONL_SECTIONS).map((k) => `"${k}"`).join(', ')}`);
    }
    (raw[section] ??= []).push(fields);
    (lines[section] ??= []).push(i + 1);
  });
  const name: RecordNamer = (section, index, id) => {
    const line = lines[section]?.[index];
    return `${line !== undefined ? `line ${line}` : `${section}[${index}]`}${id ? ` (id "${id}")` : ''}`;
  };
  return { raw, name };
}

/** Parses text in the given format into a raw document (not yet validated). */
export function parseMemoryText(file: string, text: string, format: MemoryFileFormat): { raw: unknown; name?: RecordNamer } {
  if (format === 'jsonl') return parseJsonl(file, text);
  try {
    return { raw: format === 'json' ? JSON.parse(text) : parseYaml(text, { prettyErrors: true }) };
  } catch (e) {
    if (e instanceof YAMLParseError) {
      const where = e.linePos?.[0] ? `line ${e.linePos[0].line}` : null;
      throw new MemoryFileError(file, where, null, `not valid YAML (${e.message.split('\n')[0]})`);
    }
    throw new MemoryFileError(file, null, null, `not valid JSON (${(e as Error).message})`);
  }
}

/** Reads, parses and validates a memory file. Nothing is written. */
export async function loadMemoryFile(file: string): Promise<{ document: MemoryDocument; external: ExternalReference[] }> {
  const format = formatOf(file);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new MemoryFileError(file, null, null, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const { raw, name } = parseMemoryText(file, text, format);
  return validateMemoryDocument(file, raw, name);
}
