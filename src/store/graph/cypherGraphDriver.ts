import { readFileSync } from 'node:fs';
import {
  ENTRY_EDGE_TYPES,
  RELATION_TYPES,
  type CodeLocation,
  type EntryEdgeType,
  type GoldenPath,
  type Relation,
  type RelationType,
} from '../../model/types.js';
import { invalidInput, MemcoreError } from '../../model/errors.js';
import type { EntryNode, GraphBatch, GraphCounts, GraphDriver, GraphEdge, GraphRemoval, KnownRecords, RelationRef } from './graphStore.js';
import type { CodeLinksData } from './codeLinks.js';
import { FolderInUseError, nativeDetail, storeFailure, translateNativeErrors } from '../storeErrors.js';

const ddl = readFileSync(new URL('../../../schema/graph.cypher', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => !l.trim().startsWith('//'))
  .join('\n')
  .split(';')
  .map((s) => s.trim())
  .filter(Boolean);

/** A value the native binding takes as a parameter or gives back in a row. */
export type NativeValue = null | boolean | number | bigint | string | Date | NativeValue[] | { [key: string]: NativeValue };
type Row = Record<string, NativeValue>;
type Params = Record<string, NativeValue>;

/**
 * What this driver uses of an embedded Cypher database's Node binding: Kuzu's (`kuzu`) and its
 * maintained fork LadybugDB's (`@ladybugdb/core`) have the same API and the same Cypher, so one
 * driver serves both (drivers.ts loads the binding a folder needs).
 */
export interface NativeQueryResult {
  getAllSync(): Row[];
  close(): void;
}
export interface NativeConnection {
  query(statement: string): Promise<NativeQueryResult | NativeQueryResult[]>;
  prepare(statement: string): Promise<object>;
  execute(prepared: object, params: Params): Promise<NativeQueryResult | NativeQueryResult[]>;
  close(): Promise<void>;
}
export interface NativeDatabase {
  init(): Promise<void>;
  close(): Promise<void>;
}
export interface NativeBinding {
  Database: new (path: string) => NativeDatabase;
  Connection: new (database: NativeDatabase) => NativeConnection;
}

const NODE_TABLE = { entry: 'MemoryEntry', code: 'CodeLocation', path: 'GoldenPath' } as const;

/** Kuzu infers one type per UNWIND column, so absent values are written as '' and -1. */
const ABSENT_TEXT = '';
const ABSENT_LINE = -1;
const text = (v: NativeValue | undefined): string | null => (typeof v === 'string' && v !== ABSENT_TEXT ? v : null);
/**
 * The Kuzu Node binding types a list parameter by its first element, so 1 (an integer to JS)
 * followed by 0.9 stores the bits of 0.9 as an integer. Doubles therefore travel as text and are
 * cast back in the query.
 */
const double = (v: number): string => String(v);
/** An empty list parameter fails to bind (type ANY), so string lists travel joined by this separator
 *  (the schema forbids control characters in key concepts). */
const LIST_SEPARATOR = '\u001f';
/** Endpoint tables and property columns (in schema order, as Cypher over `row`) of every edge type. */
const EDGE_COLUMNS: Record<Relation['type'], { from: string; to: string; props: [name: string, expr: string][] }> = {
  RELATED: {
    from: 'MemoryEntry',
    to: 'MemoryEntry',
    props: [
      ['weight', 'CAST(row.weight AS DOUBLE)'],
      ['kind', 'row.kind'],
    ],
  },
  DEPENDS_ON: { from: 'MemoryEntry', to: 'MemoryEntry', props: [] },
  SUPERSEDES: { from: 'MemoryEntry', to: 'MemoryEntry', props: [] },
  REFERENCES_CODE: { from: 'MemoryEntry', to: 'CodeLocation', props: [['relevance', 'CAST(row.relevance AS DOUBLE)']] },
  IMPLEMENTS: { from: 'MemoryEntry', to: 'GoldenPath', props: [] },
  PATH_STEP: {
    from: 'GoldenPath',
    to: 'CodeLocation',
    props: [
      ['step_order', 'row.stepOrder'],
      ['description', 'row.description'],
      ['key_concepts', `list_filter(string_split(row.keyConcepts, '${LIST_SEPARATOR}'), k -> k <> '')`],
    ],
  },
  IMPORTS: { from: 'CodeLocation', to: 'CodeLocation', props: [] },
};

/**
 * Rows for a bulk query, as one list parameter per column that the query zips back into `row`
 * (`UNWIND range(1, $n) AS i WITH {…: $c0[i], …} AS row`). The Node binding converts a list of
 * structs value by value; lists of plain values go ~3× faster (a COPY of 50K entries ~1.3 → ~0.45 s).
 * Every row has the keys of the first; `leaveOut` names one the query does not read.
 */
function rowsByColumn(rows: Params[], leaveOut?: string): { clause: string; params: Params } {
  const names = Object.keys(rows[0]!).filter((name) => name !== leaveOut);
  const params: Params = { n: rows.length };
  names.forEach((name, c) => (params[`c${c}`] = rows.map((r) => r[name]!)));
  return { clause: `UNWIND range(1, $n) AS i WITH {${names.map((name, c) => `\`${name}\`: $c${c}[i]`).join(', ')}} AS row`, params };
}

const setClause = (variable: string, props: [name: string, expr: string][]) =>
  props.length > 0 ? ` SET ${props.map(([name, expr]) => `${variable}.${name} = ${expr}`).join(', ')}` : '';

/** The parameter row of one relation, every property present (absent ones as defaults). */
function edgeRow(r: Relation): Params {
  switch (r.type) {
    case 'RELATED':
      return { from: r.from, to: r.to, weight: double(r.weight ?? 1), kind: r.kind ?? 'related' };
    case 'REFERENCES_CODE':
      return { from: r.from, to: r.to, relevance: double(r.relevance ?? 1) };
    case 'PATH_STEP':
      return {
        from: r.from,
        to: r.to,
        stepOrder: r.stepOrder ?? 1,
        description: r.description ?? ABSENT_TEXT,
        keyConcepts: (r.keyConcepts ?? []).join(LIST_SEPARATOR),
      };
    default:
      return { from: r.from, to: r.to };
  }
}
const isEntryEdgeType = (t: string): t is EntryEdgeType => (ENTRY_EDGE_TYPES as readonly string[]).includes(t);

/** Which rows of `type` exist, as far as `known` can tell (undefined: the database is asked about every row). */
function knownEdges(known: KnownRecords | undefined, type: RelationType): ((row: Params) => boolean) | undefined {
  if (!known) return undefined;
  if (isEntryEdgeType(type)) return (row) => known.edge({ type, from: String(row.from), to: String(row.to) });
  const codeEdge = known.codeEdge?.bind(known);
  if (codeEdge && (type === 'REFERENCES_CODE' || type === 'IMPLEMENTS'))
    return (row) => codeEdge({ type, from: String(row.from), to: String(row.to) });
  return undefined;
}

const line = (v: NativeValue | undefined): number | null => (v === null || v === undefined || Number(v) === ABSENT_LINE ? null : Number(v));

function codeFromRow(r: Row): CodeLocation {
  return {
    id: String(r.c_id),
    codebaseId: String(r.c_codebase_id),
    filePath: String(r.c_file_path),
    symbol: text(r.c_symbol),
    startLine: line(r.c_start_line),
    endLine: line(r.c_end_line),
    language: text(r.c_language),
    kind: text(r.c_kind),
    fingerprint: text(r.c_fingerprint),
    revision: text(r.c_revision),
  };
}

const CODE_RETURN =
  'c.id AS c_id, c.codebase_id AS c_codebase_id, c.file_path AS c_file_path, c.symbol AS c_symbol, c.start_line AS c_start_line, c.end_line AS c_end_line, c.language AS c_language, c.fingerprint AS c_fingerprint, c.kind AS c_kind, c.revision AS c_revision';
const PATH_RETURN = `g.id AS g_id, g.name AS g_name, g.concept AS g_concept, g.description AS g_description, s.step_order AS step_order, s.description AS step_description, s.key_concepts AS key_concepts, ${CODE_RETURN}`;

/** Groups golden-path rows (one per step) into paths with ordered steps. */
function pathsFromRows(rows: Row[]): GoldenPath[] {
  const paths = new Map<string, GoldenPath>();
  for (const r of rows) {
    const id = String(r.g_id);
    let p = paths.get(id);
    if (!p) {
      p = { id, name: String(r.g_name), concept: text(r.g_concept), description: text(r.g_description), steps: [] };
      paths.set(id, p);
    }
    if (r.c_id !== null && r.c_id !== undefined && !p.steps.some((s) => s.order === Number(r.step_order) && s.code.id === r.c_id)) {
      p.steps.push({
        order: Number(r.step_order),
        description: text(r.step_description),
        keyConcepts: (r.key_concepts as string[] | null) ?? [],
        code: codeFromRow(r),
      });
    }
  }
  for (const p of paths.values()) p.steps.sort((a, b) => a.order - b.order);
  return [...paths.values()];
}

/**
 * The graph driver (GraphDriver) over Kuzu or LadybugDB: storage and scans; the structures the
 * query path holds in memory are ResidentGraph's. Every value travels as a parameter; only
 * validated integers and edge-type names from a fixed list are written into query text.
 */
export class CypherGraphDriver implements GraphDriver {
  private readonly statements = new Map<string, Promise<object>>();
  /** A write failed: what the database holds in memory may be unsound (see close). */
  private writeFailed = false;

  private constructor(
    private readonly binding: NativeBinding,
    private readonly db: NativeDatabase,
    private readonly conn: NativeConnection,
    /** The graph file, which a failure names (translateNativeErrors). */
    readonly location: string,
  ) {}

  /** Opens (creating when absent) the graph file with `binding`; `name` is the database's, for errors. */
  static async open(binding: NativeBinding, file: string, name = 'graph'): Promise<CypherGraphDriver> {
    let db: NativeDatabase;
    try {
      db = new binding.Database(file);
      await db.init();
    } catch (e) {
      const message = (e as Error).message;
      if (/lock/i.test(message)) throw new FolderInUseError(file);
      throw new MemcoreError(`cannot open the ${name} database at ${file}: ${nativeDetail(e)}`, 'STORE');
    }
    const store = new CypherGraphDriver(binding, db, new binding.Connection(db), file);
    try {
      for (const statement of ddl) await store.exec(statement);
    } catch (e) {
      await store.close().catch(() => undefined);
      throw storeFailure('the graph', file, e);
    }
    return store;
  }

  /**
   * Runs a statement without parameters. Every QueryResult must be closed before the database:
   * the Kuzu binding crashes the process at exit (SIGSEGV) when one is left to the finaliser.
   */
  private async exec(statement: string): Promise<void> {
    const results = await this.conn.query(statement);
    for (const r of Array.isArray(results) ? results : [results]) r.close();
  }

  private async run(cypher: string, params: Params = {}): Promise<Row[]> {
    let ps = this.statements.get(cypher);
    if (!ps) {
      ps = this.conn.prepare(cypher);
      this.statements.set(cypher, ps);
    }
    const result = (await this.conn.execute(await ps, params)) as NativeQueryResult;
    try {
      // The async getAll awaits every row (~25 µs a row); reading the finished result at once is ~10× faster.
      return result.getAllSync();
    } finally {
      result.close();
    }
  }

  async write(batch: GraphBatch, known?: KnownRecords): Promise<void> {
    const entries = batch.entries.map((e) => ({ id: e.id, core_id: e.coreId, title: e.title, entry_type: e.entryType }));
    const knownEntry = known && ((row: Params) => known.entry(String(row.id)));
    // New entries and nothing else (a remember without links, or a group of them) are one COPY,
    // which commits by itself: BEGIN and COMMIT would be two more round trips to Kuzu's thread,
    // each waiting its turn on a busy server's event loop.
    if (knownEntry && batch.codeLocations.length + batch.goldenPaths.length + batch.relations.length === 0 && !entries.some(knownEntry)) {
      try {
        await this.mergeNodes('MemoryEntry', entries, knownEntry);
      } catch (e) {
        this.writeFailed = true;
        throw e;
      }
      return;
    }
    await this.exec('BEGIN TRANSACTION');
    try {
      await this.mergeNodes('MemoryEntry', entries, knownEntry);
      await this.mergeNodes(
        'CodeLocation',
        batch.codeLocations.map((c) => ({
          id: c.id,
          codebase_id: c.codebaseId,
          file_path: c.filePath,
          symbol: c.symbol ?? ABSENT_TEXT,
          start_line: c.startLine ?? ABSENT_LINE,
          end_line: c.endLine ?? ABSENT_LINE,
          language: c.language ?? ABSENT_TEXT,
          fingerprint: c.fingerprint ?? ABSENT_TEXT,
          kind: c.kind ?? ABSENT_TEXT,
          revision: c.revision ?? ABSENT_TEXT,
        })),
      );
      await this.mergeNodes(
        'GoldenPath',
        batch.goldenPaths.map((g) => ({
          id: g.id,
          name: g.name,
          concept: g.concept ?? ABSENT_TEXT,
          description: g.description ?? ABSENT_TEXT,
        })),
      );
      for (const type of RELATION_TYPES) {
        const { from, to, props } = EDGE_COLUMNS[type];
        const rows = new Map<string, Params>(); // one edge per pair and type, the last one given wins
        for (const r of batch.relations)
          if (r.type === type) rows.set(`${r.from}\u0000${r.to}`, { key: `${r.from}\u0000${r.to}`, ...edgeRow(r) });
        await this.bulkMerge(
          [...rows.values()],
          `MATCH (a:${from} {id: row.from})-[r:${type}]->(b:${to} {id: row.to})${setClause('r', props)} RETURN DISTINCT row.key AS k`,
          `COPY ${type} FROM (ROWS RETURN row.from, row.to${props.map(([, expr]) => `, ${expr}`).join('')})`,
          knownEdges(known, type),
        );
      }
      await this.exec('COMMIT');
    } catch (e) {
      this.writeFailed = true;
      await this.exec('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  /** Upserts nodes by id; every row has every column of the table, in schema order. */
  private async mergeNodes(table: string, rows: Params[], known?: (row: Params) => boolean): Promise<void> {
    if (rows.length === 0) return;
    const props = Object.keys(rows[0]!)
      .filter((k) => k !== 'id')
      .map((k): [string, string] => [k, `row.${k}`]);
    const unique = new Map(rows.map((r) => [String(r.id), { key: r.id ?? null, ...r }]));
    await this.bulkMerge(
      [...unique.values()],
      `MATCH (n:${table} {id: row.id})${setClause('n', props)} RETURN row.key AS k`,
      `COPY ${table} FROM (ROWS RETURN row.id${props.map(([, expr]) => `, ${expr}`).join('')})`,
      known,
    );
  }

  /**
   * MERGE semantics at bulk speed: one query updates the rows that exist and returns their keys,
   * one COPY adds the rest. (UNWIND + MERGE costs Kuzu ~2 ms an edge and grows with the node
   * table; COPY from a subquery stays ~0.01 ms a row.) `updateExisting` follows the rows' clause
   * (rowsByColumn), and `copyNew` has them where it says ROWS. `known`, when the caller can tell
   * which rows exist, narrows the update query to those.
   */
  private async bulkMerge(rows: Params[], updateExisting: string, copyNew: string, known?: (row: Params) => boolean): Promise<void> {
    if (rows.length === 0) return;
    const candidates = known ? rows.filter(known) : rows;
    let existing = new Set<string>();
    if (candidates.length > 0) {
      const { clause, params } = rowsByColumn(candidates);
      existing = new Set((await this.run(`${clause} ${updateExisting}`, params)).map((r) => String(r.k)));
    }
    const fresh = rows.filter((r) => !existing.has(String(r.key)));
    if (fresh.length === 0) return;
    const { clause, params } = rowsByColumn(fresh, 'key'); // the key only matches updated rows to theirs
    await this.run(
      copyNew.replace('ROWS', () => clause),
      params,
    );
  }

  async deleteEntries(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.run('MATCH (e:MemoryEntry) WHERE e.id IN $ids DETACH DELETE e', { ids: [...ids] });
    } catch (e) {
      this.writeFailed = true;
      throw e;
    }
  }

  async remove(batch: GraphRemoval): Promise<void> {
    if (batch.codeLocations.length + batch.goldenPaths.length + batch.relations.length === 0) return;
    await this.exec('BEGIN TRANSACTION');
    try {
      for (const type of RELATION_TYPES) {
        const rows = batch.relations.filter((r) => r.type === type).map((r) => ({ from: r.from, to: r.to }));
        if (rows.length === 0) continue;
        const { from, to } = EDGE_COLUMNS[type];
        const { clause, params } = rowsByColumn(rows);
        await this.run(`${clause} MATCH (a:${from} {id: row.from})-[r:${type}]->(b:${to} {id: row.to}) DELETE r`, params);
      }
      if (batch.codeLocations.length > 0)
        await this.run('MATCH (n:CodeLocation) WHERE n.id IN $ids DETACH DELETE n', { ids: [...batch.codeLocations] });
      if (batch.goldenPaths.length > 0)
        await this.run('MATCH (n:GoldenPath) WHERE n.id IN $ids DETACH DELETE n', { ids: [...batch.goldenPaths] });
      await this.exec('COMMIT');
    } catch (e) {
      this.writeFailed = true;
      await this.exec('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  async edgesInto(ids: readonly string[], types: readonly RelationType[]): Promise<RelationRef[]> {
    if (ids.length === 0) return [];
    const out: RelationRef[] = [];
    for (const type of types) {
      if (!(RELATION_TYPES as readonly string[]).includes(type)) throw invalidInput(`unknown relation type "${String(type)}"`);
      const { from, to } = EDGE_COLUMNS[type];
      const rows = await this.run(`MATCH (a:${from})-[:${type}]->(b:${to}) WHERE b.id IN $ids RETURN a.id AS from, b.id AS to`, {
        ids: [...ids],
      });
      out.push(...rows.map((r) => ({ type, from: String(r.from), to: String(r.to) })));
    }
    return out;
  }

  async scanCodeLinks(): Promise<CodeLinksData> {
    const references = (
      await this.run('MATCH (e:MemoryEntry)-[r:REFERENCES_CODE]->(c:CodeLocation) RETURN e.id AS e, c.id AS c, r.relevance AS relevance')
    ).map((r) => ({ entryId: String(r.e), codeId: String(r.c), relevance: Number(r.relevance ?? 1) }));
    const implementations = (await this.run('MATCH (e:MemoryEntry)-[:IMPLEMENTS]->(g:GoldenPath) RETURN e.id AS e, g.id AS g')).map(
      (r) => ({ entryId: String(r.e), pathId: String(r.g) }),
    );
    return { references, implementations, codeLocations: await this.allCodeLocations(), goldenPaths: await this.goldenPathsByIds() };
  }

  async scanEntryEdges(): Promise<{ ids: string[]; edges: GraphEdge[] }> {
    const ids = (await this.run('MATCH (e:MemoryEntry) RETURN e.id AS id')).map((r) => String(r.id));
    const edges = await this.run(
      `MATCH (a:MemoryEntry)-[r:${ENTRY_EDGE_TYPES.join('|')}]->(b:MemoryEntry)
         RETURN a.id AS from, b.id AS to, label(r) AS type, CASE WHEN label(r) = 'RELATED' THEN r.weight ELSE 1.0 END AS weight`,
    );
    return {
      ids,
      edges: edges.map((r) => ({ from: String(r.from), to: String(r.to), type: r.type as EntryEdgeType, weight: Number(r.weight ?? 1) })),
    };
  }

  async existingIds(kind: 'entry' | 'code' | 'path', ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.run(`UNWIND $ids AS i MATCH (n:${NODE_TABLE[kind]} {id: i}) RETURN n.id AS id`, { ids: [...new Set(ids)] });
    return new Set(rows.map((r) => String(r.id)));
  }

  async findGoldenPaths(concepts: readonly string[]): Promise<(GoldenPath & { matched: number })[]> {
    const wanted = [...new Set(concepts.map((c) => c.trim().toLowerCase()).filter(Boolean))];
    if (wanted.length === 0) return [];
    const rows = await this.run(
      `UNWIND $concepts AS q
       MATCH (g:GoldenPath)
       OPTIONAL MATCH (g)-[s:PATH_STEP]->(:CodeLocation)
       WITH g, q, s
       WHERE contains(lower(g.name), q) OR contains(lower(g.concept), q) OR contains(lower(g.description), q)
          OR (s IS NOT NULL AND size(list_filter(s.key_concepts, k -> contains(lower(k), q))) > 0)
       RETURN g.id AS id, count(DISTINCT q) AS matched`,
      { concepts: wanted },
    );
    if (rows.length === 0) return [];
    const matched = new Map(rows.map((r) => [String(r.id), Number(r.matched)]));
    return (await this.goldenPathsByIds([...matched.keys()]))
      .map((p) => ({ ...p, matched: matched.get(p.id) ?? 0 }))
      .sort((a, b) => b.matched - a.matched || a.name.localeCompare(b.name));
  }

  /** The golden paths with these ids (all of them without ids), steps ordered. */
  private async goldenPathsByIds(ids?: string[]): Promise<GoldenPath[]> {
    const rows = await this.run(
      `MATCH (g:GoldenPath)${ids ? ' WHERE g.id IN $ids' : ''} OPTIONAL MATCH (g)-[s:PATH_STEP]->(c:CodeLocation) RETURN ${PATH_RETURN}`,
      ids ? { ids } : {},
    );
    return pathsFromRows(rows);
  }

  async getGoldenPath(id: string): Promise<GoldenPath | null> {
    return (await this.goldenPathsByIds([id]))[0] ?? null;
  }

  async entryNodes(): Promise<EntryNode[]> {
    return (
      await this.run(
        'MATCH (e:MemoryEntry) RETURN e.id AS id, e.core_id AS core_id, e.title AS title, e.entry_type AS entry_type ORDER BY id',
      )
    ).map((r) => ({ id: String(r.id), coreId: String(r.core_id), title: String(r.title), entryType: String(r.entry_type) }));
  }

  async entryIds(): Promise<string[]> {
    return (await this.run('MATCH (e:MemoryEntry) RETURN e.id AS id')).map((r) => String(r.id));
  }

  async allGoldenPaths(): Promise<GoldenPath[]> {
    return this.goldenPathsByIds();
  }

  async allRelations(): Promise<Relation[]> {
    const ends = (type: string, to: string, extra = '') =>
      `MATCH (a:MemoryEntry)-[r:${type}]->(b:${to}) RETURN a.id AS from, b.id AS to${extra} ORDER BY from, to`;
    const pairs = async (type: 'DEPENDS_ON' | 'SUPERSEDES' | 'IMPLEMENTS', to: string): Promise<Relation[]> =>
      (await this.run(ends(type, to))).map((r) => ({ type, from: String(r.from), to: String(r.to) }));
    const related = (await this.run(ends('RELATED', 'MemoryEntry', ', r.weight AS weight, r.kind AS kind'))).map((r): Relation => ({
      type: 'RELATED',
      from: String(r.from),
      to: String(r.to),
      ...(r.weight !== null && r.weight !== undefined ? { weight: Number(r.weight) } : {}),
      ...(typeof r.kind === 'string' ? { kind: r.kind } : {}),
    }));
    const code = (await this.run(ends('REFERENCES_CODE', 'CodeLocation', ', r.relevance AS relevance'))).map((r): Relation => ({
      type: 'REFERENCES_CODE',
      from: String(r.from),
      to: String(r.to),
      ...(r.relevance !== null && r.relevance !== undefined ? { relevance: Number(r.relevance) } : {}),
    }));
    return [
      ...related,
      ...(await pairs('DEPENDS_ON', 'MemoryEntry')),
      ...(await pairs('SUPERSEDES', 'MemoryEntry')),
      ...code,
      ...(await pairs('IMPLEMENTS', 'GoldenPath')),
      ...(await this.run('MATCH (a:CodeLocation)-[r:IMPORTS]->(b:CodeLocation) RETURN a.id AS from, b.id AS to ORDER BY from, to')).map(
        (r): Relation => ({ type: 'IMPORTS', from: String(r.from), to: String(r.to) }),
      ),
    ];
  }

  async allCodeLocations(): Promise<CodeLocation[]> {
    return (await this.run(`MATCH (c:CodeLocation) RETURN ${CODE_RETURN}`)).map((r) => codeFromRow(r));
  }

  async checkpoint(): Promise<void> {
    await this.exec('CHECKPOINT');
  }

  async counts(): Promise<GraphCounts> {
    const one = async (cypher: string) => Number((await this.run(cypher))[0]?.n ?? 0);
    const relations = Object.fromEntries(
      await Promise.all(RELATION_TYPES.map(async (t) => [t, await one(`MATCH ()-[r:${t}]->() RETURN count(r) AS n`)] as const)),
    ) as GraphCounts['relations'];
    return {
      entries: await one('MATCH (n:MemoryEntry) RETURN count(n) AS n'),
      codeLocations: await one('MATCH (n:CodeLocation) RETURN count(n) AS n'),
      goldenPaths: await one('MATCH (n:GoldenPath) RETURN count(n) AS n'),
      relations,
    };
  }

  /**
   * Closing checkpoints what the database holds in memory into its file. After a failed write
   * that may be unsound: a transaction whose commit failed on its write-ahead log (a volume gone
   * read-only) leaves Kuzu with the primary keys of its rows but not the rows, and the checkpoint
   * makes every later insert of those ids fail ("duplicated primary key"), the journal's replay
   * included. So after a failed write the close holds a read-only transaction open, which makes
   * Kuzu's checkpoint give up after waiting ~5 s for it: the file stays as the last checkpoint
   * left it, the write-ahead log replays what was committed, and the journal replays the failed
   * write. (LadybugDB defers its close to the holder's and then keeps the failed transaction's
   * rows whole, which the replay merges: tried both ways, test/writeAbort.test.ts.)
   */
  async close(): Promise<void> {
    let holder: NativeConnection | undefined;
    if (this.writeFailed) {
      holder = new this.binding.Connection(this.db);
      await holder
        .query('BEGIN TRANSACTION READ ONLY')
        .then((r) => (Array.isArray(r) ? r : [r]).forEach((q) => q.close()))
        .catch(() => undefined);
    }
    await this.conn.close();
    await this.db.close();
    await holder?.close().catch(() => undefined);
  }
}

translateNativeErrors(CypherGraphDriver, 'the graph', [
  'write',
  'deleteEntries',
  'remove',
  'edgesInto',
  'existingIds',
  'scanEntryEdges',
  'scanCodeLinks',
  'findGoldenPaths',
  'getGoldenPath',
  'allCodeLocations',
  'allGoldenPaths',
  'allRelations',
  'entryIds',
  'entryNodes',
  'counts',
  'checkpoint',
]);
