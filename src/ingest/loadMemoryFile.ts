import { readFile, stat } from 'node:fs/promises';
import { MAX_FILE_BYTES } from '../model/memoryFile.js';
import { extname } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { MemoryFileError } from '../model/errors.js';
import { quoted } from '../model/ids.js';
import { validateMemoryDocument, type ExternalReference, type MemoryDocument, type RecordNamer } from '../model/memoryFile.js';

const JSONL_SECTIONS: Record<string, string> = {
  entry: 'entries',
  code_location: 'code_locations',
  golden_path: 'golden_paths',
  relation: 'relations',
  feedback: 'feedback',
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
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec))
      throw new MemoryFileError(file, `line ${i + 1}`, null, 'must be a JSON object');
    const { kind, ...fields } = rec as Record<string, unknown>;
    const section = typeof kind === 'string' ? JSONL_SECTIONS[kind] : undefined;
    if (!section) {
      throw new MemoryFileError(
        file,
        `line ${i + 1}`,
        'kind',
        `must be one of ${Object.keys(JSONL_SECTIONS)
          .map((k) => `"${k}"`)
          .join(', ')}`,
      );
    }
    // The record's `kind` names its section, so a RELATED edge's own kind is written `relation_kind`.
    if (section === 'relations' && 'relation_kind' in fields) {
      const { relation_kind, ...rest } = fields;
      (raw[section] ??= []).push({ ...rest, kind: relation_kind });
    } else (raw[section] ??= []).push(fields);
    (lines[section] ??= []).push(i + 1);
  });
  const name: RecordNamer = (section, index, id) => {
    const line = lines[section]?.[index];
    return `${line !== undefined ? `line ${line}` : `${section}[${index}]`}${id ? ` (id ${quoted(id)})` : ''}`;
  };
  return { raw, name };
}

/**
 * Parses text in the given format into a raw document (not yet validated). A leading byte order
 * mark is dropped in every format alike; an error names the format that was parsed.
 */
export function parseMemoryText(file: string, text: string, format: MemoryFileFormat): { raw: unknown; name?: RecordNamer } {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (format === 'jsonl') return parseJsonl(file, body);
  try {
    return { raw: format === 'json' ? JSON.parse(body) : parseYaml(body, { prettyErrors: true }) };
  } catch (e) {
    if (e instanceof YAMLParseError) {
      const where = e.linePos?.[0] ? `line ${e.linePos[0].line}` : null;
      throw new MemoryFileError(file, where, null, `not valid YAML (${e.message.split('\n')[0]})`);
    }
    // e.g. the yaml package's ReferenceError for an alias bomb ("Excessive alias count …")
    throw new MemoryFileError(
      file,
      null,
      null,
      `not valid ${format === 'json' ? 'JSON' : 'YAML'} (${(e as Error).message.split('\n')[0]})`,
    );
  }
}

/**
 * The file's bytes as text; bytes that are not UTF-8 are refused, naming the line and the byte
 * offset, where a lenient decode would store U+FFFD in their place without a word.
 */
export function decodeUtf8(file: string, bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const offset = firstInvalidUtf8(bytes);
    let line = 1;
    for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
    throw new MemoryFileError(
      file,
      `line ${line}`,
      null,
      `is not valid UTF-8 at byte offset ${offset} (0x${bytes[offset]!.toString(16).padStart(2, '0')}); save the file as UTF-8`,
    );
  }
}

/** Byte offset of the first sequence that is not well-formed UTF-8 (Unicode 15, table 3-7). */
function firstInvalidUtf8(b: Uint8Array): number {
  for (let i = 0; i < b.length;) {
    const x = b[i]!;
    const [n, lo, hi] =
      x < 0x80
        ? [0, 0, 0]
        : x >= 0xc2 && x <= 0xdf
          ? [1, 0x80, 0xbf]
          : x === 0xe0
            ? [2, 0xa0, 0xbf]
            : x === 0xed
              ? [2, 0x80, 0x9f]
              : x >= 0xe1 && x <= 0xef
                ? [2, 0x80, 0xbf]
                : x === 0xf0
                  ? [3, 0x90, 0xbf]
                  : x >= 0xf1 && x <= 0xf3
                    ? [3, 0x80, 0xbf]
                    : x === 0xf4
                      ? [3, 0x80, 0x8f]
                      : [-1, 0, 0];
    if (n < 0) return i;
    for (let k = 1; k <= n; k++) {
      const c = b[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return b.length;
}

/** Reads, parses and validates a memory file. Nothing is written. */
export async function loadMemoryFile(file: string): Promise<{ document: MemoryDocument; external: ExternalReference[] }> {
  const format = formatOf(file);
  let bytes: Uint8Array;
  try {
    const { size } = await stat(file);
    if (size > MAX_FILE_BYTES) {
      throw new MemoryFileError(
        file,
        null,
        null,
        `is ${(size / 2 ** 20).toFixed(0)} MiB; a memory file may hold at most ${MAX_FILE_BYTES / 2 ** 20} MiB (it is read whole): split it, or use JSONL files of fewer records`,
      );
    }
    bytes = await readFile(file);
  } catch (e) {
    if (e instanceof MemoryFileError) throw e;
    throw new MemoryFileError(file, null, null, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const { raw, name } = parseMemoryText(file, decodeUtf8(file, bytes), format);
  return validateMemoryDocument(file, raw, name);
}
