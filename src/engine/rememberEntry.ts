/**
 * The writes behind `remember` and `forget`: one entry in an agent's words, validated as a memory
 * file and indexed; a retraction that supersedes an entry.
 */
import type { Embedder } from '../embed/embedder.js';
import { indexDocument } from '../ingest/indexer.js';
import { MemcoreError } from '../model/errors.js';
import { deriveEntryId, validateMemoryDocument } from '../model/memoryFile.js';
import { resolveSensitivity } from '../recipe/searchOptions.js';
import type { Stores } from '../store/stores.js';
import { entryLinks } from './entryDetails.js';
import { DEFAULT_CORE, rememberDocument, retractionDocument, withEntryId, type RememberInput, type RememberResult } from './remember.js';
import { namedLinks } from './visibility.js';

/** Writes the entry `remember` describes (its input already checked) and returns its id and links after the write. */
export async function rememberEntry(stores: Stores, embedder: Embedder, input: RememberInput): Promise<RememberResult> {
  const id = input.id ?? deriveEntryId(typeof input.core === 'string' ? input.core : DEFAULT_CORE, String(input.title));
  const { document, external } = validateMemoryDocument('remember', withEntryId(rememberDocument(input), id));
  const existed = (await stores.graph.existingIds('entry', [id])).size > 0;
  await indexDocument(stores, embedder, 'remember', document, external, { autoLink: input.autoLink !== false });
  // The new entry's own links to secrets stay unnamed, as every other read leaves them.
  const { links } = await namedLinks(stores, id, await entryLinks(stores.graph, id), resolveSensitivity(undefined));
  return { id, created: !existed, links };
}

/** Writes a retraction that supersedes entry `id`, holding `reason`; returns the retraction's id. */
export async function retractEntry(stores: Stores, embedder: Embedder, id: string, reason: string): Promise<string> {
  const [old] = (await stores.table.read({ ids: [id] })).map((s) => s.entry);
  if (!old) throw new MemcoreError(`no entry with id "${id}"`, 'NOT_FOUND');
  const doc = retractionDocument(old, reason);
  const retractionId = deriveEntryId(old.coreId, doc.entries![0]!.title);
  const { document, external } = validateMemoryDocument('forget', {
    ...doc,
    relations: [{ type: 'SUPERSEDES', from: retractionId, to: id }],
  });
  await indexDocument(stores, embedder, 'forget', document, external, {});
  return retractionId;
}
