/**
 * The reads that are not searches (listing, lookups, the graph around an entry, code, export,
 * statistics), each a function of the stores and its options as the caller gave them: options
 * are checked and given their defaults by engine/readOptions.ts. MemoryEngine holds the read gate
 * around them.
 */
import type { MemoryDocumentRecord } from '../model/memoryFile.js';
import { RECORD_ENTRY_TYPES } from '../model/entryFilter.js';
import { invalidInput, MemcoreError, throwIfAborted } from '../model/errors.js';
import { checkId } from '../model/ids.js';
import { checkOptionNames } from '../model/options.js';
import { ENTRY_EDGE_TYPES, type CodeSearchHit, type MemoryEntry, type Sensitivity, type StoreStats } from '../model/types.js';
import type { Embedder } from '../embed/embedder.js';
import type { Stores } from '../store/stores.js';
import type { CodeReferenceQuery } from '../store/graph/graphStore.js';
import { resolveFilter } from '../recipe/searchOptions.js';
import { exactNearest } from '../retrieve/vectorCandidates.js';
import { hydrateHits } from '../retrieve/hydrateHits.js';
import { makeHit, type Hit } from '../retrieve/candidate.js';
import { dropSuperseded } from '../retrieve/dropSuperseded.js';
import { CodeIndex } from '../code/codeIndex.js';
import { codeFreshness } from '../code/codeFreshness.js';
import { readSignals } from '../feedback/effectiveness.js';
import { exportDocument } from '../ops/export.js';
import { coreMemoryBlock } from '../format/coreMemoryBlock.js';
import { entryDetails, type EntryDetails } from './entryDetails.js';
import { sampleEntryGraph, type EntryGraph, type EntryGraphQuery } from './entryGraph.js';
import { entriesInEffect, namedLinks, traverseFrom } from './visibility.js';
import { CODE_REFERENCE_QUERY, type CodeReferenceHit, type RelatedToCodeHit, type RelatedToCodeOptions } from './engineOptions.js';
import type { SensitivityOption, TraverseHit, TraverseOptions } from './engineOptions.js';
import { attachCode } from '../retrieve/attachCode.js';
import { codeCandidates } from '../retrieve/codeCandidates.js';
import type { FindCodeOptions } from './engineOptions.js';
import {
  findCodeOptions,
  coreMemoryOptions,
  entryGraphOptions,
  listOptions,
  relatedToCodeOptions,
  sensitivityOf,
  traverseOptions,
  type ListOptions,
} from './readOptions.js';

/** The entries in effect (engine/visibility.ts), in the listing's order; `entryTypes: ['retraction']` lists retractions. */
export async function listEntries(stores: Stores, options: ListOptions): Promise<MemoryEntry[]> {
  const { filter, limit, offset } = listOptions(options);
  // A listing that names a record type by name asks for those records (the history of `forget`).
  const notEntryTypes = filter.notEntryTypes?.filter((t) => !filter.entryTypes?.includes(t));
  const rows = await entriesInEffect(stores, { ...filter, notEntryTypes }, options.asOf);
  rows.sort((a, b) => a.coreId.localeCompare(b.coreId) || a.title.localeCompare(b.title) || a.id.localeCompare(b.id));
  return rows.slice(offset, offset + limit);
}

export async function coreMemory(
  stores: Stores,
  core: string,
  options: { maxTokens?: number },
): Promise<{ core: string; text: string; entries: MemoryEntry[] }> {
  const { maxTokens } = coreMemoryOptions(options);
  checkId('coreMemory', core);
  const entries = await entriesInEffect(stores, resolveFilter({ cores: [core] }), undefined);
  return coreMemoryBlock(core, entries, maxTokens);
}

/** `repo`: the folder code locations are relative to, when known; the code then carries freshness. */
export async function readEntryDetails(
  stores: Stores,
  id: string,
  options: SensitivityOption,
  repo: string | undefined,
): Promise<EntryDetails | null> {
  checkId('entryDetails', id);
  const sensitivity = sensitivityOf('entryDetails', options);
  const [entry] = (await stores.table.read({ ids: [id], sensitivity })).map((s) => s.entry);
  if (!entry) return null;
  const details = await entryDetails(stores.graph, entry);
  const { links, named } = await namedLinks(stores, id, details.links, sensitivity);
  const index = repo && details.code.length > 0 ? new CodeIndex(repo, [stores.dir]) : undefined;
  const code = index
    ? await Promise.all(details.code.map(async (c) => ({ ...c, freshness: (await codeFreshness(c.code, index)).status })))
    : details.code;
  return { ...details, links, code, supersededBy: details.supersededBy && named(details.supersededBy) ? details.supersededBy : null };
}

export async function exportMemory(stores: Stores, options: { cores?: string[] } & SensitivityOption): Promise<MemoryDocumentRecord> {
  checkOptionNames('exportMemory', options, ['cores', 'sensitivity']);
  const filter = resolveFilter({ ...(options.cores ? { cores: options.cores } : {}), ...options });
  const entries = (await stores.table.read({ ...(filter.cores ? { cores: filter.cores } : {}), sensitivity: filter.sensitivity })).map(
    (s) => s.entry,
  );
  const graph = stores.graph;
  return exportDocument(
    entries,
    await graph.allCodeLocations(),
    await graph.allGoldenPaths(),
    await graph.allRelations(),
    await readSignals(stores.dir),
  );
}

export async function getEntries(stores: Stores, ids: string[], options: SensitivityOption): Promise<MemoryEntry[]> {
  const sensitivity = sensitivityOf('getEntries', options);
  if (!Array.isArray(ids)) throw invalidInput('getEntries needs a list of entry ids');
  ids.forEach((id, i) => checkId(`getEntries: ids[${i}]`, id));
  const found = new Map((await stores.table.read({ ids, sensitivity })).map((s) => [s.entry.id, s.entry]));
  return ids.flatMap((id) => found.get(id) ?? []);
}

export async function traverse(stores: Stores, startId: string, options: TraverseOptions): Promise<TraverseHit[]> {
  const settings = traverseOptions(options);
  checkId('traverse', startId);
  return traverseFrom(stores, startId, settings);
}

export async function entryGraph(stores: Stores, query: EntryGraphQuery, options: SensitivityOption): Promise<EntryGraph> {
  const { maxNodes, depth, sensitivity } = entryGraphOptions(query, options);
  let entries: MemoryEntry[];
  if ('focus' in query) {
    const reached = await traverse(stores, query.focus, { depth, sensitivity });
    entries = [...(await getEntries(stores, [query.focus], { sensitivity })), ...reached.map((r) => r.entry)];
  } else {
    checkId('entryGraph: core', query.core);
    // A drawing, not an answer: superseded entries stay, beside the SUPERSEDES edge that retired them.
    entries = (await stores.table.read(resolveFilter({ cores: [query.core], sensitivity }))).map((s) => s.entry);
  }
  const edges = await stores.graph.edgesAmong(
    entries.map((e) => e.id),
    ENTRY_EDGE_TYPES,
  );
  return sampleEntryGraph(entries, edges, maxNodes, 'focus' in query ? query.focus : undefined);
}

/** `embedQuery`: the engine's, which checks the query and caches its vector. */
export async function findRelatedToCode(
  stores: Stores,
  embedQuery: (query: string, signal?: AbortSignal) => Promise<Float32Array>,
  filePath: string,
  query: string,
  options: RelatedToCodeOptions,
): Promise<RelatedToCodeHit[]> {
  const { limit, sensitivity, signal } = relatedToCodeOptions(options);
  if (typeof filePath !== 'string' || filePath === '') throw invalidInput('filePath must be a non-empty string');
  const vector = await embedQuery(query, signal);
  const refs = await stores.graph.findByCodeReference({ filePath });
  throwIfAborted(signal);
  // The exact search, over the referencing entries only: no row is read but the hits'.
  const filter = { ids: [...new Set(refs.map((r) => r.entryId))], validAt: new Date(), notEntryTypes: RECORD_ENTRY_TYPES, sensitivity };
  // In effect, as a search is: no record, nothing a successor supersedes.
  const keep = async (hits: Hit[]) => (await dropSuperseded(stores, hits, { signal })).kept;
  const { hits } = await exactNearest(stores, vector, { filter, limit, threshold: -1, keep, signal });
  return hits.map(({ entry, similarity }) => ({
    entry,
    similarity,
    references: refs.filter((r) => r.entryId === entry.id).map((r) => ({ code: r.code, relevance: r.relevance })),
  }));
}

export async function findByCodeReference(
  stores: Stores,
  query: CodeReferenceQuery,
  options: SensitivityOption,
): Promise<CodeReferenceHit[]> {
  checkOptionNames('findByCodeReference', query, CODE_REFERENCE_QUERY);
  const sensitivity = sensitivityOf('findByCodeReference options', options);
  for (const k of ['filePath', 'symbol', 'codebaseId'] as const) {
    if (query[k] !== undefined && (typeof query[k] !== 'string' || query[k] === '')) throw invalidInput(`${k} must be a non-empty string`);
  }
  const refs = await stores.graph.findByCodeReference(query);
  const ids = [...new Set(refs.map((r) => r.entryId))];
  const read = await hydrateHits(
    stores,
    ids.map((id) => makeHit(id, 0, [])),
    { filter: { sensitivity } },
  );
  const entries = new Map(read.map((h) => [h.id, h.entry]));
  return refs.flatMap((r) => {
    const entry = entries.get(r.entryId);
    return entry ? [{ entry, relevance: r.relevance, code: r.code }] : [];
  });
}

export async function stats(stores: Stores, embedder: Embedder): Promise<StoreStats> {
  const { entries, cores, entryTypes } = await stores.table.tally();
  const graph = await stores.graph.counts();
  if (graph.entries !== entries) {
    throw new MemcoreError(`stores disagree: LanceDB holds ${entries} entries, Kuzu ${graph.entries}`, 'STORE');
  }
  return {
    entries,
    cores,
    entryTypes,
    codeLocations: graph.codeLocations,
    goldenPaths: graph.goldenPaths,
    relations: graph.relations,
    embedder: { id: embedder.id, dimensions: embedder.dimensions },
    generation: await stores.currentGeneration(),
    search: await stores.searchRunsOn(entries),
    resident: Object.fromEntries(stores.residents.loads),
  };
}

/**
 * Code locations for a text (the code channel, retrieve/codeCandidates.ts): the imported code
 * ranked by the text's words, fused with the code that the entries `search` finds reference.
 */
export async function findCode(
  stores: Stores,
  search: (text: string, sensitivity: Sensitivity[], signal?: AbortSignal) => Promise<string[]>,
  text: string,
  options: FindCodeOptions,
): Promise<CodeSearchHit[]> {
  const { limit, codebases, entries, sensitivity, signal } = findCodeOptions(options);
  if (typeof text !== 'string' || text.trim() === '') throw invalidInput('findCode needs a non-empty text');
  const entryIds = entries ? await search(text, sensitivity, signal) : [];
  const referenced = entryIds.length > 0 ? (await attachCode(stores, entryIds, signal)).codeRefs : [];
  return codeCandidates(stores, text, { limit, referenced, ...(codebases ? { codebases } : {}), ...(signal ? { signal } : {}) });
}
