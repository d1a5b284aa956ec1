/**
 * The writes, each a function of the stores and the folder's embedder with its input as the
 * caller gave it: checked here, then written through the journal (Stores.apply). MemoryEngine
 * runs them one at a time.
 */
import { resolve, sep } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { embeddingText, indexDocument, type IngestOptions, type IngestReport } from '../ingest/indexer.js';
import { loadMemoryFile } from '../ingest/loadMemoryFile.js';
import { sourceKeyOf } from '../ingest/sourceKey.js';
import { invalidInput, MemcoreError, requireFolder } from '../model/errors.js';
import { checkId } from '../model/ids.js';
import { validateMemoryDocument } from '../model/memoryFile.js';
import { checkOptionNames } from '../model/options.js';
import { refuse } from '../model/optionChecks.js';
import { checkCode, type CheckCodeOptions, type CheckReport } from '../code/checkCode.js';
import { copyStore, type BackupManifest } from '../ops/backup.js';
import type { Stores } from '../store/stores.js';
import {
  CHECK_CODE_OPTIONS,
  CODE_REFERENCE_FIELDS,
  INGEST_OPTIONS,
  REMEMBER_FIELDS,
  checkIngestOptions,
  fingerprinted,
} from './engineOptions.js';
import { stats } from './reads.js';
import type { RememberInput, RememberResult } from './remember.js';
import { rememberEntry, retractEntry } from './rememberEntry.js';

/** A memory file (.json, .jsonl, .yaml), upserted whole; its path is the source its later syncs match. */
export async function ingestFile(stores: Stores, embedder: Embedder, file: string, options: IngestOptions): Promise<IngestReport> {
  checkIngestOptions('ingest', options, INGEST_OPTIONS);
  const { document, external } = await loadMemoryFile(file);
  const doc = await fingerprinted('ingest', document, options.repo);
  return indexDocument(stores, embedder, sourceKeyOf(file, stores.dir), doc, external, { ...options, recordSource: true, inputName: file });
}

/**
 * A document given as an object (`ingestDocument`, `upsert`, `link`), validated like a memory
 * file. `recordSource`: keep what `source` wrote (a named document), which its later syncs need.
 */
export async function writeDocument(
  stores: Stores,
  embedder: Embedder,
  where: string,
  doc: unknown,
  options: IngestOptions & { source?: string },
  allowed: readonly string[],
): Promise<IngestReport> {
  checkIngestOptions(where, options, allowed);
  const { source: named, ...ingest } = options;
  if (options.sync && named === undefined) throw invalidInput(`${where}: sync needs a source (what the store should match)`);
  const source = named ?? (where === 'ingestDocument' ? 'api' : where);
  if (typeof source !== 'string' || source === '') throw invalidInput(`${where}: source must be a non-empty string`);
  const { document, external } = validateMemoryDocument(source, doc);
  return indexDocument(stores, embedder, source, await fingerprinted(where, document, options.repo), external, {
    ...ingest,
    recordSource: named !== undefined,
  });
}

export const INGEST_DOCUMENT_OPTIONS = [...INGEST_OPTIONS, 'source'];

export async function checkCodeOf(stores: Stores, embedder: Embedder, options: CheckCodeOptions): Promise<CheckReport> {
  checkOptionNames('checkCode', options, CHECK_CODE_OPTIONS);
  if (typeof options.repo !== 'string' || options.repo === '')
    throw invalidInput('checkCode needs repo: the folder code locations are relative to');
  const repo = await requireFolder('checkCode', options.repo);
  if (options.codebase !== undefined) checkId('checkCode: codebase', options.codebase);
  if (options.fix !== undefined && typeof options.fix !== 'boolean') throw invalidInput('checkCode: fix must be true or false');
  return checkCode(stores, embedder, { ...options, repo });
}

export async function deleteEntries(stores: Stores, ids: string[]): Promise<{ deleted: number }> {
  if (!Array.isArray(ids)) throw invalidInput('delete needs a list of entry ids');
  ids.forEach((id, i) => checkId(`delete: ids[${i}]`, id));
  const found = await stores.table.read({ ids });
  if (found.length > 0) await stores.apply({ op: 'delete', ids: found.map((f) => f.entry.id) });
  return { deleted: found.length };
}

/** remember's input checked before anything is written (the memory file rules check its fields). */
export function checkRemember(input: RememberInput): void {
  checkOptionNames('remember', input, REMEMBER_FIELDS);
  input.code?.forEach((c, i) => checkOptionNames(`remember.code[${i}]`, c, CODE_REFERENCE_FIELDS));
  if (input.autoLink !== undefined && typeof input.autoLink !== 'boolean') throw invalidInput('remember: autoLink must be true or false');
}

/** The text `remember` will embed, when its input has one to tell (a group embeds its writes' texts at once). */
export function rememberedText(input: RememberInput): string[] | undefined {
  const { title, content } = (input ?? {}) as Partial<RememberInput>;
  return typeof title === 'string' && typeof content === 'string' ? [embeddingText({ title, content })] : undefined;
}

export async function remember(stores: Stores, embedder: Embedder, input: RememberInput): Promise<RememberResult> {
  checkRemember(input);
  return rememberEntry(stores, embedder, input);
}

export type ForgetMode = 'supersede' | 'delete';

export async function forget(
  stores: Stores,
  embedder: Embedder,
  id: string,
  options: { reason?: string; mode?: ForgetMode },
): Promise<{ id: string; mode: ForgetMode; retractionId?: string }> {
  const { mode } = checkForget(id, options);
  if (mode === 'delete') {
    if ((await deleteEntries(stores, [id])).deleted === 0) throw new MemcoreError(`no entry with id "${id}"`, 'NOT_FOUND');
    return { id, mode };
  }
  return { id, mode, retractionId: await retractEntry(stores, embedder, id, options.reason!) };
}

/** forget's arguments checked: the mode, the id, and a reason to supersede. */
export function checkForget(id: string, options: { reason?: string; mode?: ForgetMode }): { mode: ForgetMode; reason?: string } {
  checkOptionNames('forget', options, ['reason', 'mode']);
  const mode = options.mode ?? 'supersede';
  if (mode !== 'supersede' && mode !== 'delete')
    refuse('forget.mode', mode, ['supersede', 'delete'], `forget: mode must be supersede or delete, got ${JSON.stringify(mode)}`);
  checkId('forget', id);
  const reason = options.reason;
  if (mode === 'supersede' && (typeof reason !== 'string' || reason.trim() === ''))
    throw invalidInput("forget: a reason is required to supersede an entry (it is kept as the retraction's content)");
  return { mode, ...(reason !== undefined ? { reason } : {}) };
}

/** Checks a backup's destination before it waits for the writes queued before it. */
export function backupTarget(dir: string, dest: string, options: { onProgress?: unknown }): string {
  checkOptionNames('backup', options, ['onProgress']);
  if (typeof dest !== 'string' || dest === '') throw invalidInput('backup needs a destination folder');
  const target = resolve(dest);
  if (target === dir || target.startsWith(dir + sep)) throw invalidInput(`a backup cannot go inside the folder it copies (${dir})`);
  return target;
}

export async function backup(
  stores: Stores,
  embedder: Embedder,
  target: string,
  onProgress: ((done: number, total: number) => void) | undefined,
): Promise<BackupManifest> {
  await stores.graph.checkpoint();
  await stores.embeddingCache.flush(); // a cache row written in the background lands before the copy
  const s = await stats(stores, embedder);
  const relations = Object.values(s.relations).reduce((a, b) => a + b, 0);
  const counts = { entries: s.entries, codeLocations: s.codeLocations, goldenPaths: s.goldenPaths, relations };
  return copyStore(stores.dir, target, { embedder: s.embedder, generation: s.generation, counts }, onProgress);
}
