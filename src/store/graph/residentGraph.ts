import { ENTRY_EDGE_TYPES, type CodeLocation, type EntryEdgeType, type GoldenPath, type Relation } from '../../model/types.js';
import { invalidInput } from '../../model/errors.js';
import { Residents, type Resident } from '../resident/residents.js';
import { CodeLinks } from './codeLinks.js';
import { EntryAdjacency } from './entryAdjacency.js';
import type {
  CodeEdgeType,
  CodeReferenceQuery,
  EntryCodeReference,
  GraphBatch,
  GraphDriver,
  GraphEdge,
  GraphHit,
  GraphRemoval,
  GraphStore,
  KnownRecords,
  ReachOptions,
} from './graphStore.js';

const isEntryEdgeType = (t: string): t is EntryEdgeType => (ENTRY_EDGE_TYPES as readonly string[]).includes(t);
const isCodeEdge = (r: Relation): r is Relation & { type: CodeEdgeType } => r.type === 'REFERENCES_CODE' || r.type === 'IMPLEMENTS';

function checkEdgeTypes(types: readonly string[]): void {
  for (const t of types) if (!isEntryEdgeType(t)) throw invalidInput(`unknown edge type "${String(t)}"`);
}

const graphEdgeOf = (r: Relation & { type: EntryEdgeType }): GraphEdge => ({
  from: r.from,
  to: r.to,
  type: r.type,
  weight: r.type === 'RELATED' ? (r.weight ?? 1) : 1,
});

/**
 * A GraphStore over any GraphDriver, holding what the query path reads of the graph in memory:
 * the entry adjacency (walks, supersession, edges among candidates, which entries exist) and the
 * code links (references, golden paths, lookups by file or symbol). Both are Residents (see
 * store/resident/residents.ts): built on first use from the driver's scan, or loaded from their
 * snapshot files when the stores hold them; this store keeps them in step with its own writes,
 * in place for the adjacency, by reloading the code links after a write that touches code.
 * Storage itself is the driver's, so a second driver (a Cypher server, the maintained Kuzu fork)
 * gets all of this.
 */
export class ResidentGraph implements GraphStore {
  constructor(
    private readonly driver: GraphDriver,
    /** Where the structures are held: on their own until the stores that own the folder take them (`holdIn`). */
    private residents = new Residents(),
  ) {}

  /** Entry-to-entry edges and which entries exist. */
  private readonly adjacency: Resident<EntryAdjacency> = {
    key: 'adjacency',
    followedByOwner: true,
    build: async () => {
      const { ids, edges } = await this.driver.scanEntryEdges();
      return new EntryAdjacency(ids, edges);
    },
    snapshot: { fingerprint: 'adjacency/3', write: (a) => a.snapshot(), read: (content) => EntryAdjacency.fromSnapshot(content) },
  };

  /** Entries' code references and golden paths (four scans in Kuzu). */
  private readonly codeLinks: Resident<CodeLinks> = {
    key: 'code-links',
    followedByOwner: true,
    build: async () => new CodeLinks(await this.driver.scanCodeLinks()),
    snapshot: { fingerprint: 'code-links/2', write: (c) => c.snapshot(), read: (content) => CodeLinks.fromSnapshot(content) },
  };

  /**
   * Every code location: a remember's auto-linking looks for them in its text, and reading them
   * from Kuzu took ~11 ms of each lone write at 10K entries (growing with the store). A write of
   * entries leaves them as they are (follow does nothing); a write of code drops them (write, remove).
   */
  private readonly codeLocations: Resident<readonly CodeLocation[]> = {
    key: 'code-locations',
    build: () => this.driver.allCodeLocations(),
    follow: () => undefined,
  };

  holdIn(residents: Residents): void {
    this.residents = residents;
  }

  async warm(): Promise<void> {
    await Promise.all([this.entryEdges(), this.loadCodeLinks()]);
  }

  private entryEdges(): Promise<EntryAdjacency> {
    return this.residents.get(this.adjacency);
  }

  private loadCodeLinks(): Promise<CodeLinks> {
    return this.residents.get(this.codeLinks);
  }

  async write(batch: GraphBatch): Promise<void> {
    const entryEdges = batch.relations.filter((r): r is Relation & { type: EntryEdgeType } => isEntryEdgeType(r.type)).map(graphEdgeOf);
    // New entries and entry edges skip the existence query, which grows with the table (~2 s for
    // 5,000 entries, ~1.5 s for 2,300 edges at 100K entries): the adjacency knows what exists.
    const adjacency = entryEdges.length > 0 || batch.entries.length > 0 ? await this.entryEdges() : undefined;
    // Likewise the code links for an entry's edges to code and golden paths, while the write adds
    // neither code locations nor golden paths (those reload the links): they are then kept in
    // step in place, not reloaded after the write.
    const codeEdges = batch.relations.filter(isCodeEdge);
    const linksReload =
      batch.codeLocations.length > 0 ||
      batch.goldenPaths.length > 0 ||
      batch.relations.some((r) => !isEntryEdgeType(r.type) && !isCodeEdge(r));
    const links = codeEdges.length > 0 && !linksReload ? await this.loadCodeLinks() : undefined;
    try {
      // without the adjacency (a write of code edges alone) its questions are not asked
      const known: KnownRecords | undefined =
        adjacency || links
          ? {
              entry: (id) => adjacency?.hasEntry(id) ?? true,
              edge: (e) => adjacency?.has(e) ?? true,
              ...(links ? { codeEdge: (e: Parameters<CodeLinks['has']>[0]) => links.has(e) } : {}),
            }
          : undefined;
      await this.driver.write(batch, known);
    } catch (e) {
      // a load during the transaction may hold what was rolled back
      this.changedAhead({ drop: true });
      throw e;
    }
    if (batch.codeLocations.length > 0) this.residents.changedAhead(this.codeLocations.key, { drop: true });
    adjacency?.addEntries(batch.entries.map((e) => e.id));
    adjacency?.upsert(entryEdges);
    if (links) {
      // the last of a pair given twice wins, as in the database
      links.upsert(
        codeEdges.flatMap((r) => (r.type === 'REFERENCES_CODE' ? [{ entryId: r.from, codeId: r.to, relevance: r.relevance ?? 1 }] : [])),
        codeEdges.flatMap((r) => (r.type === 'IMPLEMENTS' ? [{ entryId: r.from, pathId: r.to }] : [])),
      );
    } else if (linksReload || codeEdges.length > 0) this.residents.changedAhead(this.codeLinks.key, { drop: true });
  }

  async deleteEntries(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.driver.deleteEntries(ids);
    this.changedAhead();
    (await this.residents.heldValue<EntryAdjacency>(this.adjacency.key))?.removeEntries(ids);
    (await this.residents.heldValue<CodeLinks>(this.codeLinks.key))?.removeEntries(ids);
  }

  async remove(batch: GraphRemoval): Promise<void> {
    if (batch.codeLocations.length + batch.goldenPaths.length + batch.relations.length === 0) return;
    try {
      await this.driver.remove(batch);
    } finally {
      // A sync is rare next to queries: reloading both is simpler than following every kind of removal.
      this.changedAhead({ drop: true });
    }
  }

  /** The graph changed before the write moves the generation: no snapshot of the one before describes it. */
  private changedAhead(opts: { drop?: boolean } = {}): void {
    this.residents.changedAhead(this.adjacency.key, opts);
    this.residents.changedAhead(this.codeLinks.key, opts);
    this.residents.changedAhead(this.codeLocations.key, opts);
  }

  /** A copy of the list held: callers may filter or sort it. */
  async allCodeLocations(): Promise<CodeLocation[]> {
    return [...(await this.residents.get(this.codeLocations))];
  }

  async existingIds(kind: 'entry' | 'code' | 'path', ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    if (kind !== 'entry') return this.driver.existingIds(kind, ids);
    const adjacency = await this.entryEdges();
    return new Set(ids.filter((id) => adjacency.hasEntry(id)));
  }

  async reach(seedIds: readonly string[], opts: ReachOptions): Promise<GraphHit[]> {
    if (seedIds.length === 0 || opts.edgeTypes.length === 0) return [];
    if (!Number.isInteger(opts.depth) || opts.depth < 1 || opts.depth > 10)
      throw invalidInput(`depth must be an integer from 1 to 10, got ${opts.depth}`);
    checkEdgeTypes(opts.edgeTypes);
    const direction = opts.direction ?? 'both';
    if (!['outgoing', 'incoming', 'both'].includes(direction))
      throw invalidInput(`direction must be outgoing, incoming or both, got "${String(direction)}"`);
    return (await this.entryEdges()).reach(seedIds, { ...opts, direction });
  }

  async hubsAmong(ids: readonly string[], degree: number): Promise<Set<string>> {
    const adjacency = await this.entryEdges();
    return new Set(ids.filter((id) => adjacency.degree(id) > degree));
  }

  async supersededBy(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    return (await this.entryEdges()).supersededBy(ids);
  }

  async edgesAmong(ids: readonly string[], edgeTypes: readonly EntryEdgeType[]): Promise<GraphEdge[]> {
    if (ids.length < 2 || edgeTypes.length === 0) return [];
    checkEdgeTypes(edgeTypes);
    return (await this.entryEdges()).edgesAmong(ids, edgeTypes);
  }

  async codeReferencesOf(entryIds: readonly string[]): Promise<EntryCodeReference[]> {
    if (entryIds.length === 0) return [];
    return (await this.loadCodeLinks()).codeReferencesOf(entryIds);
  }

  async goldenPathsOf(entryIds: readonly string[]): Promise<(GoldenPath & { entryIds: string[] })[]> {
    if (entryIds.length === 0) return [];
    return (await this.loadCodeLinks()).goldenPathsOf(entryIds);
  }

  /** From the code links held in memory, which a Cypher `contains` over every code location took ~7 ms at 100K entries to answer. */
  async findByCodeReference(q: CodeReferenceQuery): Promise<EntryCodeReference[]> {
    if (q.filePath === undefined && q.symbol === undefined && q.codebaseId === undefined)
      throw invalidInput('findByCodeReference needs filePath, symbol or codebaseId');
    return (await this.loadCodeLinks()).findByCodeReference(q);
  }

  // The rest is storage: the driver's.
  edgesInto: GraphDriver['edgesInto'] = (ids, types) => this.driver.edgesInto(ids, types);
  findGoldenPaths: GraphDriver['findGoldenPaths'] = (concepts) => this.driver.findGoldenPaths(concepts);
  getGoldenPath: GraphDriver['getGoldenPath'] = (id) => this.driver.getGoldenPath(id);
  entryIds: GraphDriver['entryIds'] = () => this.driver.entryIds();
  entryNodes: GraphDriver['entryNodes'] = () => this.driver.entryNodes();
  allGoldenPaths: GraphDriver['allGoldenPaths'] = () => this.driver.allGoldenPaths();
  allRelations: GraphDriver['allRelations'] = () => this.driver.allRelations();
  counts: GraphDriver['counts'] = () => this.driver.counts();
  checkpoint: GraphDriver['checkpoint'] = () => this.driver.checkpoint();
  close: GraphDriver['close'] = () => this.driver.close();
}
