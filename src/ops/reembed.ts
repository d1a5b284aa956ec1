/**
 * Moving a folder to another embedding model without ever mixing vectors: the memory is written
 * into a new folder beside it with the new model, while the old one keeps answering; a last
 * catch-up and the swap run with writes held back, and the old folder is removed once the new
 * one is in place. The new folder survives an interruption, and a second run resumes it: what is
 * already there unchanged is not embedded again.
 */
import { existsSync } from 'node:fs';
import { cp, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { indexDocument } from '../ingest/indexer.js';
import { validateMemoryDocument, type MemoryDocumentRecord } from '../model/memoryFile.js';
import { Stores } from '../store/stores.js';
import { leaveSnapshotsCurrent } from './freshSnapshots.js';
import type { AccessGate } from '../engine/accessGate.js';

export interface ReembedReport {
  from: string;
  to: string;
  entries: number;
  /** Texts sent to the new model (fewer on a resumed run). */
  embedded: number;
}

/** Where the new folder is built: beside the old one, named for the model. */
export function reembedFolder(dir: string, model: string): string {
  return join(dirname(dir), `.${basename(dir)}.reembed-${model.replace(/[^\w.-]+/g, '_')}`);
}

const BATCH = 2_000;

/** Writes `doc` into `next`: code and golden paths, then entries in batches, then relations. Returns texts embedded. */
export async function copyInto(
  next: Stores,
  embedder: Embedder,
  doc: MemoryDocumentRecord,
  onProgress?: (message: string) => void,
): Promise<number> {
  let embedded = 0;
  const write = async (part: MemoryDocumentRecord, source: string) => {
    const { document, external } = validateMemoryDocument(source, part);
    embedded += (await indexDocument(next, embedder, source, document, external, {})).embedded;
  };
  await write({ code_locations: doc.code_locations ?? [], golden_paths: doc.golden_paths ?? [] }, 'reembed:code');
  const entries = doc.entries ?? [];
  for (let i = 0; i < entries.length; i += BATCH) {
    onProgress?.(`re-embedding entries ${i}/${entries.length}`);
    await write({ entries: entries.slice(i, i + BATCH) }, `reembed:entries-${i}`);
  }
  onProgress?.(`re-embedded ${entries.length} entries; relations …`);
  await write({ relations: doc.relations ?? [] }, 'reembed:relations');
  return embedded;
}

/** Entries in `next` that `doc` no longer holds (deleted in the old folder meanwhile) are deleted there too. */
export async function dropRemoved(next: Stores, doc: MemoryDocumentRecord): Promise<void> {
  const keep = new Set((doc.entries ?? []).map((e) => e.id!));
  const gone = (await next.graph.entryIds()).filter((id) => !keep.has(id));
  if (gone.length > 0) await next.apply({ op: 'delete', ids: gone });
}

/** Puts `built` in place of `dir`: the old folder is moved aside, and removed once the new one is in. */
export async function swapFolders(dir: string, built: string): Promise<void> {
  // What each source wrote is the same records under the new model: syncs go on working. Ratings
  // and the log of unanswered tasks are about entries and tasks, not vectors: they move over too.
  for (const name of ['sources', 'feedback.jsonl', 'gaps.jsonl']) {
    await rm(join(built, name), { recursive: true, force: true });
    if (existsSync(join(dir, name))) await cp(join(dir, name), join(built, name), { recursive: true });
  }
  const aside = `${built}.previous`;
  await rm(aside, { recursive: true, force: true });
  await rename(dir, aside);
  try {
    await rename(built, dir);
  } catch (e) {
    await rename(aside, dir);
    throw e;
  }
  await rm(aside, { recursive: true, force: true });
}

/** What `reembedInPlace` needs of the engine whose folder it moves. */
export interface ReembedHost {
  stores: Stores;
  model: Embedder;
  /** Its writes' queue and the gate that holds reads during the swap. */
  gate: AccessGate;
  /** The whole memory, every sensitivity, as it stands now. */
  exportAll(stores: Stores): Promise<MemoryDocumentRecord>;
  /** Takes the stores to use from now on: the new folder's, or the old one's reopened after a failed swap. */
  adopt(stores: Stores, model: Embedder): void;
}

/**
 * Moves an open folder to the model `next`: the memory is copied into a new folder while the
 * engine keeps answering, then a last catch-up and the swap run with writes held back (and reads
 * for the few milliseconds of the swap itself).
 */
export async function reembedInPlace(
  host: ReembedHost,
  next: Embedder,
  onProgress: ((message: string) => void) | undefined,
): Promise<ReembedReport> {
  const { stores, model, gate } = host;
  const from = model.id;
  const { dir, residentMaxEntries, scanMaxEntries, scanThreadMinEntries } = stores;
  const settings = { residentMaxEntries, scanMaxEntries, scanThreadMinEntries };
  const built = reembedFolder(dir, next.id);
  const target = await Stores.open(built, next, settings);
  let targetOpen = true;
  try {
    let embedded = await copyInto(target, next, await host.exportAll(stores), onProgress);
    // Before writes are held back: the first reader of the new folder loads snapshots, not builds (the catch-up's few writes are followed).
    onProgress?.('writing snapshots …');
    await leaveSnapshotsCurrent(target, { all: true });
    return await gate.serialized(async () => {
      onProgress?.('catching up with writes made meanwhile, then swapping folders …');
      const doc = await host.exportAll(stores);
      embedded += await copyInto(target, next, doc);
      await dropRemoved(target, doc);
      await target.close();
      targetOpen = false;
      return gate.withReadsHeld(async () => {
        await stores.close();
        try {
          await swapFolders(dir, built);
        } catch (e) {
          host.adopt(await Stores.open(dir, model, settings), model);
          throw e;
        }
        host.adopt(await Stores.open(dir, next, settings), next);
        return { from, to: next.id, entries: doc.entries!.length, embedded };
      });
    });
  } finally {
    if (targetOpen) await target.close();
  }
}
