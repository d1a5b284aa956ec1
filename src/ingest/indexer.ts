import { createHash } from 'node:crypto';
import { embedForWrite, type Embedder } from '../embed/embedder.js';
import { project } from '../embed/matryoshka.js';
import { MemoryFileError, throwIfAborted } from '../model/errors.js';
import type { EntryInput, ExternalReference, MemoryDocument } from '../model/memoryFile.js';
import type { CodeLocation, MemoryEntry } from '../model/types.js';
import type { StoredEntry } from '../store/lance/entriesTable.js';
import { findLinks, linkableName, type AutoLinkOptions } from './autoLink.js';
import { refuseSupersedesCycles } from './supersedesCycles.js';
import { serializeStored, type Stores } from '../store/stores.js';
import { capText } from '../embed/chunkText.js';
import { planSync, type SourcePart, type SyncReport } from './syncSource.js';
import type { FeedbackSignal } from '../feedback/effectiveness.js';

export interface IngestReport {
  /** Where the records came from (file path or a caller's label). */
  source: string;
  entries: { added: number; updated: number; unchanged: number };
  /** Texts sent to the embedding model (new or changed, not in the embedding cache). */
  embedded: number;
  /** New or changed texts whose vector came from the embedding cache. */
  fromCache: number;
  codeLocations: number;
  goldenPaths: number;
  relations: number;
  /** Relations found by auto-linking (included in `relations`). */
  autoLinks: number;
  /** False when the store already held exactly this content. */
  changed: boolean;
  /** What a sync removed or kept (`sync: true`, and the importers); absent otherwise. */
  sync?: SyncReport;
  /** Ratings the file held that were recorded (those already held are skipped); absent when it held none. */
  feedback?: number;
  /** Entries written without their text's vector (`deferEmbedding`): their old vector, or none. */
  deferred?: string[];
}

export function contentHash(title: string, content: string): string {
  return createHash('sha256').update(`${title}\n${content}`).digest('hex');
}

/**
 * Characters of an entry (title and content) its vector is made from. An entry's content may be
 * far longer (2,000,000 characters, schema/memory-file.schema.json) and the keyword index reads all
 * of it; the vector, a mean over chunks, is made from the first 32,000, so a 1 MB entry embeds in
 * seconds (64 chunks of the local model, ~0.1 s each), not minutes.
 */
export const EMBEDDED_ENTRY_CHARS = 32_000;

/** The text an entry's vector is computed from. */
export function embeddingText(e: { title: string; content: string }): string {
  return capText(`${e.title}\n${e.content}`, EMBEDDED_ENTRY_CHARS);
}

const sameTime = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

function sameEntry(a: MemoryEntry, b: Omit<MemoryEntry, 'updatedAt'>): boolean {
  return (
    a.coreId === b.coreId &&
    a.title === b.title &&
    a.content === b.content &&
    a.entryType === b.entryType &&
    a.confidence === b.confidence &&
    a.importance === b.importance &&
    a.source === b.source &&
    a.sensitivity === b.sensitivity &&
    a.pinned === b.pinned &&
    a.tags.join('\u0000') === b.tags.join('\u0000') &&
    a.aliases.join('\u0000') === b.aliases.join('\u0000') &&
    sameTime(a.createdAt, b.createdAt) &&
    sameTime(a.validFrom, b.validFrom) &&
    sameTime(a.validTo, b.validTo)
  );
}

/** How a memory document is written (ingest, ingestDocument, the importers). */
export interface IngestOptions {
  /** Find mention links (titles, aliases, code symbols and paths in entry text). Default off. */
  autoLink?: boolean | AutoLinkOptions;
  signal?: AbortSignal;
  /** Hears how far the embedding has come, after every slice of 256 texts. */
  onProgress?: (message: string) => void;
  /**
   * Make the store match the source: what the source wrote before and no longer holds is removed
   * (see SyncReport for what is kept instead). Default false: records are only added or updated.
   */
  sync?: boolean;
  /**
   * The folder code locations' paths are relative to: locations without a fingerprint get one
   * from the text they point at there (and a symbol without lines its lines), so that `check` can
   * tell moved from drifted code. Default: config `repo` in the CLI, none in the library.
   */
  repo?: string;
}

/** How the engine calls indexDocument. */
export interface IndexDocumentOptions extends IngestOptions {
  /** Keep the source's manifest (what it wrote), which a sync needs: true for files and named documents. */
  recordSource?: boolean;
  /** How errors name the input (the path as the caller gave it); default the source key. */
  inputName?: string;
  /**
   * The sources the document is made of, each with its own manifest (an import writes a folder of
   * files as one document; each file is a source). Default: the whole document is `source`.
   * Auto-links join the part that holds their `from` entry.
   */
  parts?: SourcePart[];
  /** Entries whose stored vector is not made from their stored text: embedded again even when unchanged. */
  staleVectors?: ReadonlySet<string>;
  /**
   * Texts the embedding cache does not hold are not embedded: their entries keep their old vector,
   * or get none (a zero vector, which no vector search returns), and are listed in `deferred`. The
   * team folder (team/teamFolder.ts) embeds them in the background and writes them again.
   */
  deferEmbedding?: boolean;
}

/** Texts embedded, and saved to the embedding cache, at a time. */
const EMBED_SLICE = 256;

/** `embedded 512/3000 texts, 41/s, 1 min 1 s left`: what a TTY shows while an ingest embeds. */
export function embedProgress(done: number, total: number, seconds: number): string {
  const rate = done / Math.max(seconds, 1e-3);
  const left = Math.round((total - done) / rate);
  const eta = left >= 60 ? `${Math.floor(left / 60)} min ${left % 60} s` : `${left} s`;
  return `embedded ${done}/${total} texts, ${rate >= 10 ? rate.toFixed(0) : rate.toFixed(1)}/s` + (done < total ? `, ${eta} left` : '');
}

/** Adds the mention links of the document's entries (against everything stored) to its relations. */
async function withAutoLinks(
  stores: Stores,
  doc: MemoryDocument,
  options: AutoLinkOptions,
): Promise<{ doc: MemoryDocument; links: number }> {
  const fromDoc = new Map(doc.entries.map((e) => [e.id, e] as const));
  const docCode = new Set(doc.codeLocations.map((c) => c.id));
  const code = [...(await stores.graph.allCodeLocations()).filter((c) => !docCode.has(c.id)), ...doc.codeLocations];
  const focus = new Set(fromDoc.keys());
  const focused = doc.entries.length <= FOCUSED_LINK_ENTRIES ? await focusedCorpus(stores, doc, code, focus, options) : undefined;
  const stored = focused?.stored ?? (await stores.table.linkTexts()).filter((e) => !fromDoc.has(e.id));
  const corpus = [...stored, ...doc.entries].map((e) => ({ id: e.id, title: e.title, aliases: e.aliases, content: e.content }));
  const stated = new Set(doc.relations.map((r) => `${r.type}\u0000${r.from}\u0000${r.to}`));
  const links = findLinks(corpus, focused?.code ?? code, focus, options, focused?.size ?? corpus.length).filter(
    (r) => !stated.has(`${r.type}\u0000${r.from}\u0000${r.to}`),
  );
  return { doc: { ...doc, relations: [...doc.relations, ...links] }, links: links.length };
}

/** A write of at most this many entries auto-links against the stored entries that can take part, not all. */
const FOCUSED_LINK_ENTRIES = 16;
/** Past this many such entries, reading every entry costs about as much: the whole store is read. */
const FOCUSED_LINK_MAX_STORED = 2_000;

/**
 * The stored entries a small write's links can involve, found in the indexes held in memory: the
 * entries its texts name (the name index), the entries whose text holds every word of one of the
 * names or code paths involved (the keyword index: they may mention it, and a name mentioned by
 * too many entries links nothing, so they are counted), with `size`, the whole store's count,
 * that the mention share is taken of, and the code locations the write's texts mention (the only
 * ones it can link to). A lone `remember` at 100K entries read all of them before
 * (seconds). Undefined when the indexes cannot narrow it down (a name of common words only).
 * Unlike the whole-store pass, a name that more than 10 entries share is not looked for in the
 * write's text (the name index does not list it), and a mention of a name inside a longer name
 * of an entry not read here still counts.
 */
async function focusedCorpus(
  stores: Stores,
  doc: MemoryDocument,
  code: CodeLocation[],
  focus: Set<string>,
  options: AutoLinkOptions,
): Promise<{ stored: MemoryEntry[]; size: number; code: CodeLocation[] } | undefined> {
  const [keywords, names] = await Promise.all([stores.keywords(), stores.names()]);
  const named = new Set(doc.entries.flatMap((e) => names.occurrences(e.content).map((o) => o.id)).filter((id) => !focus.has(id)));
  const namedRows = (await stores.read([...named])).map((r) => r.entry);
  const texts = [...doc.entries, ...namedRows].flatMap((e) => [e.title, ...e.aliases]);
  // The code the new texts mention (its paths and symbols are matched exactly, so a text that
  // mentions one holds it as a substring: a cheap test first), and so the ones whose mentions count.
  const own = doc.entries.map((e) => ({ id: e.id, title: e.title, aliases: e.aliases, content: e.content }));
  const patternsOf = (c: CodeLocation) => [c.symbol ?? '', c.filePath, c.filePath.split('/').at(-1) ?? ''].filter(Boolean);
  const near = code.filter((c) => patternsOf(c).some((p) => own.some((e) => e.content.includes(p))));
  const mentioned = new Set(
    findLinks(own, near, focus, options, Number.MAX_SAFE_INTEGER)
      .filter((r) => r.type === 'REFERENCES_CODE')
      .map((r) => r.to),
  );
  const mentionedCode = near.filter((c) => mentioned.has(c.id));
  for (const c of mentionedCode) texts.push(...patternsOf(c));
  const ids = new Set(named);
  for (const text of new Set(texts)) {
    if (!linkableName(text, options.minLength)) continue;
    const holding = keywords.holdingAll(text, FOCUSED_LINK_MAX_STORED);
    if (!holding) return undefined;
    for (const id of holding) if (!focus.has(id)) ids.add(id);
    if (ids.size > FOCUSED_LINK_MAX_STORED) return undefined;
  }
  const rest = [...ids].filter((id) => !named.has(id));
  const stored = [...namedRows, ...(await stores.read(rest)).map((r) => r.entry)];
  const existing = await stores.graph.existingIds('entry', [...focus]);
  return { stored, size: keywords.size + focus.size - existing.size, code: mentionedCode };
}

/** The parts a write records; auto-links (relations no part states) join the part of their `from` entry. */
function sourceParts(source: string, doc: MemoryDocument, parts: SourcePart[] | undefined): SourcePart[] {
  if (!parts) return [{ source, doc }];
  const stated = new Set(parts.flatMap((p) => p.doc.relations.map((r) => `${r.type}\u0000${r.from}\u0000${r.to}`)));
  const partOf = new Map(parts.flatMap((p, i) => p.doc.entries.map((e) => [e.id, i] as const)));
  const added = parts.map(() => [] as MemoryDocument['relations']);
  for (const r of doc.relations) {
    const i = partOf.get(r.from);
    if (i !== undefined && !stated.has(`${r.type}\u0000${r.from}\u0000${r.to}`)) added[i]!.push(r);
  }
  return parts.map((p, i) => (added[i]!.length === 0 ? p : { ...p, doc: { ...p.doc, relations: [...p.doc.relations, ...added[i]!] } }));
}

/**
 * Writes a validated memory document: checks references against the store, embeds only new or
 * changed text (in slices saved to the embedding cache), then applies everything as one journaled write.
 */
export async function indexDocument(
  stores: Stores,
  embedder: Embedder,
  source: string,
  input: MemoryDocument,
  external: ExternalReference[],
  options: IndexDocumentOptions = {},
): Promise<IngestReport> {
  const signal = options.signal;
  let doc = input;
  let autoLinks = 0;
  throwIfAborted(signal);
  for (const kind of ['entry', 'code', 'path'] as const) {
    const wanted = external.filter((r) => r.kind === kind);
    const found = await stores.graph.existingIds(kind, [...new Set(wanted.map((r) => r.id))]);
    const missing = wanted.find((r) => !found.has(r.id));
    if (missing) {
      const what = { entry: 'entry', code: 'code location', path: 'golden path' }[kind];
      throw new MemoryFileError(
        options.inputName ?? source,
        missing.record,
        missing.field,
        `unknown ${what} id "${missing.id}" (not in this file nor in the store)`,
      );
    }
  }

  await refuseSupersedesCycles(stores.graph, options.inputName ?? source, doc.relations);

  if (options.autoLink) {
    ({ doc, links: autoLinks } = await withAutoLinks(stores, doc, options.autoLink === true ? {} : options.autoLink));
    throwIfAborted(signal);
  }

  // Rows are read only for ids the store holds, as the graph's in-memory ids tell (the journal
  // keeps the two stores in step, and the graph write loads those ids anyway): a LanceDB read by
  // id scans the table, ~80 ms per 5,000 ids at 100K entries, also when none of them is there.
  const plan = options.recordSource ? await planSync(stores, sourceParts(source, doc, options.parts), options.sync === true) : undefined;
  const known = await stores.graph.existingIds('entry', [...doc.entries.map((e) => e.id), ...(plan?.expire ?? [])]);
  const existing = new Map(
    known.size === 0 ? [] : (await stores.table.read({ ids: [...known] }, { withVectors: true })).map((s) => [s.entry.id, s] as const),
  );
  throwIfAborted(signal);

  const now = new Date();
  const report: IngestReport = {
    source,
    entries: { added: 0, updated: 0, unchanged: 0 },
    embedded: 0,
    fromCache: 0,
    codeLocations: doc.codeLocations.length,
    goldenPaths: doc.goldenPaths.length,
    relations: doc.relations.length,
    autoLinks,
    changed: false,
  };
  const toWrite: StoredEntry[] = [];
  if (plan && options.sync) {
    const { removal } = plan;
    report.sync = {
      removed: {
        entries: removal.entries.length,
        codeLocations: removal.codeLocations.length,
        goldenPaths: removal.goldenPaths.length,
        relations: removal.relations.length,
      },
      expired: plan.expire,
      keptInUse: plan.keptInUse,
    };
    for (const id of plan.expire) {
      const old = existing.get(id);
      if (old?.vector && old.vectorSmall && (old.entry.validTo === null || old.entry.validTo.getTime() > now.getTime())) {
        toWrite.push({ entry: { ...old.entry, validTo: now }, vector: old.vector, vectorSmall: old.vectorSmall });
      }
    }
  }
  const toEmbed: { input: EntryInput; entry: MemoryEntry }[] = [];
  for (const input of doc.entries) {
    const old = existing.get(input.id);
    const createdAt = input.createdAt ?? old?.entry.createdAt ?? now;
    const hash = contentHash(input.title, input.content);
    // The entry's own date, which recency runs from: a 2020 lesson ingested today is not fresh,
    // and a change of its tags or importance does not make it so; a change of its text does.
    const textChanged = old !== undefined && old.entry.contentHash !== hash;
    const updatedAt =
      input.updatedAt ?? (textChanged ? now : new Date(Math.max(createdAt.getTime(), old?.entry.updatedAt.getTime() ?? -Infinity)));
    const entry: MemoryEntry = { ...input, createdAt, updatedAt, contentHash: hash };
    const stale = options.staleVectors?.has(input.id) === true;
    if (old && !stale && sameEntry(old.entry, entry)) {
      report.entries.unchanged++;
      continue;
    }
    if (old) report.entries.updated++;
    else report.entries.added++;
    if (old && !stale && old.entry.contentHash === entry.contentHash && old.vector && old.vectorSmall) {
      toWrite.push({ entry, vector: old.vector, vectorSmall: old.vectorSmall });
    } else {
      toEmbed.push({ input, entry });
    }
  }

  const texts = toEmbed.map((t) => embeddingText(t.input));
  const useCache = embedder.cacheVectors !== false;
  // A group of writes may have embedded (and cached) them in one call already (engine/groupCommit.ts).
  const cached = useCache
    ? await stores.embeddingCache.get(texts.filter((t) => !stores.embeddedAhead(t)))
    : new Map<string, Float32Array>();
  const missing = options.deferEmbedding ? [] : [...new Set(texts.filter((t) => !cached.has(t)))];
  // Embedded a slice at a time, each saved to the cache as it comes back: a killed or aborted
  // ingest resumes where it stopped, re-embedding at most one slice.
  const started = performance.now();
  for (let i = 0; i < missing.length; i += EMBED_SLICE) {
    const slice = missing.slice(i, i + EMBED_SLICE);
    const ahead = slice.map((text) => stores.embeddedAhead(text));
    const embeddedAhead = ahead.every((v) => v !== undefined);
    const fresh = embeddedAhead ? ahead : await embedForWrite(embedder, slice, signal);
    if (useCache && !embeddedAhead) {
      const saved = stores.embeddingCache.put(slice.map((text, j) => ({ text, vector: fresh[j]! })));
      // Each slice of a long embedding is saved before the next (a killed run resumes from it); a
      // short one's save runs beside the write.
      if (missing.length > EMBED_SLICE) await saved;
    }
    slice.forEach((text, j) => cached.set(text, fresh[j]!));
    options.onProgress?.(embedProgress(Math.min(i + EMBED_SLICE, missing.length), missing.length, (performance.now() - started) / 1000));
  }
  report.embedded = missing.length;
  const deferred: string[] = [];
  toEmbed.forEach((t, i) => {
    const vector = cached.get(texts[i]!);
    if (vector) return toWrite.push({ entry: t.entry, vector, vectorSmall: stores.smallVector(vector) });
    deferred.push(t.entry.id);
    const old = existing.get(t.entry.id);
    if (old?.vector && old.vectorSmall) return toWrite.push({ entry: t.entry, vector: old.vector, vectorSmall: old.vectorSmall });
    const none = new Float32Array(embedder.dimensions);
    return toWrite.push({ entry: t.entry, vector: none, vectorSmall: stores.smallVector(none) });
  });
  report.fromCache = texts.length - missing.length - deferred.length;
  if (options.deferEmbedding) report.deferred = deferred;
  // Writes are serialised in one process and Kuzu's lock keeps other processes out, so ids the
  // read above did not find are still absent: those rows can be appended.
  const newIds = toWrite.filter((s) => !existing.has(s.entry.id)).map((s) => s.entry.id);
  const fit = await stores.projectionForWrite(toWrite.map((s) => s.vector));
  if (fit) {
    // The first fit: every row, stored or new, is written once under the fitted projection.
    const writing = new Set(toWrite.map((s) => s.entry.id));
    toWrite.push(...fit.stored.filter((s) => !writing.has(s.entry.id)));
    for (const s of toWrite) s.vectorSmall = project(s.vector, fit.projection);
  }

  const graph = {
    entries: doc.entries.map((e) => ({ id: e.id, coreId: e.coreId, title: e.title, entryType: e.entryType })),
    codeLocations: doc.codeLocations,
    goldenPaths: doc.goldenPaths,
    relations: doc.relations,
  };
  const fingerprint = createHash('sha256').update(JSON.stringify(graph)).digest('hex');
  await stores.currentGeneration(); // another process may have ingested this source meanwhile
  const graphChanged = stores.meta.sources[source] !== fingerprint;
  const removal =
    plan &&
    plan.removal.entries.length + plan.removal.codeLocations.length + plan.removal.goldenPaths.length + plan.removal.relations.length > 0
      ? plan.removal
      : undefined;
  report.changed = toWrite.length > 0 || graphChanged || removal !== undefined;
  if (!report.changed && !plan?.manifests.length) return withFeedback(stores, doc, report);

  throwIfAborted(signal);
  const blobs: Float32Array[] = [];
  const entries = toWrite.map((s) => serializeStored(s, blobs));
  await stores.apply(
    {
      op: 'upsert',
      entries,
      newIds,
      ...(fit ? { projection: fit.projection } : {}),
      graph,
      sources: { [source]: fingerprint },
      ...(removal ? { remove: removal } : {}),
      ...(plan?.manifests.length ? { manifests: plan.manifests } : {}),
    },
    // Auto-linked writes committed in one group link to each other's entries there (store/writeGroup.ts).
    { blobs, upserted: toWrite, ...(options.autoLink ? { autoLink: options.autoLink === true ? {} : options.autoLink } : {}) },
  );
  return withFeedback(stores, doc, report);
}

/**
 * Records the document's ratings (after its entries, which they may name), each once: a rating
 * without a key gets one from what it says, so ingesting the same file again adds none.
 */
async function withFeedback(stores: Stores, doc: MemoryDocument, report: IngestReport): Promise<IngestReport> {
  if (!doc.feedback?.length) return report;
  const inDoc = new Map(doc.entries.map((e) => [e.id, e]));
  const missing = doc.feedback.map((f) => f.entryId).filter((id) => !inDoc.has(id));
  const stored = new Map(
    (missing.length > 0 ? await stores.table.read({ ids: [...new Set(missing)] }) : []).map((s) => [s.entry.id, s.entry]),
  );
  const now = new Date().toISOString();
  const signals: FeedbackSignal[] = doc.feedback.map((f) => {
    const entry = (inDoc.get(f.entryId) ?? stored.get(f.entryId))!;
    const at = f.at?.toISOString() ?? null;
    const key =
      f.key ??
      `file:${createHash('sha256')
        .update(JSON.stringify([f.entryId, f.useful, at, f.bundleId, f.note]))
        .digest('hex')
        .slice(0, 32)}`;
    return {
      key,
      at: at ?? now,
      entryId: f.entryId,
      coreId: entry.coreId,
      source: entry.source,
      bundleId: f.bundleId,
      useful: f.useful,
      ...(f.note !== null ? { note: f.note } : {}),
    };
  });
  const held = (await stores.effectiveness()).keys;
  const fresh = [...new Map(signals.filter((s) => !held.has(s.key)).map((s) => [s.key, s])).values()];
  if (fresh.length > 0) await stores.apply({ op: 'feedback', signals: fresh });
  return { ...report, feedback: fresh.length };
}
