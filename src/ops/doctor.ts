/**
 * `memcore doctor`: checks a database folder part by part, without the open that would refuse it
 * or replay its journal, and says what each finding means and what `--repair` does about it.
 * Repair rebuilds what can be derived (graph nodes from the table's rows, the projection, the
 * indexes, an unfinished write from its journal) and names what only a backup can bring back.
 */
import { existsSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { MemcoreError } from '../model/errors.js';
import { graphDriverOf, graphFileName, openGraphStore } from '../store/graph/drivers.js';
import type { ResidentGraph } from '../store/graph/residentGraph.js';
import { Journal } from '../store/journal/journal.js';
import { EntriesTable } from '../store/lance/entriesTable.js';
import { holdsStores, missingMeta, readMeta, writeMeta, type StoreMeta } from '../store/meta.js';
import { Stores } from '../store/stores.js';

export interface Finding {
  /** What was checked: meta, journal, entries, graph, agreement, projection, indexes. */
  check: string;
  ok: boolean;
  /** What was found, and what it means. */
  message: string;
  /** What `repair` does about it; absent when it needs nothing, or nothing can be done short of a backup. */
  repair?: string;
  /** Set when `repair` ran and did it. */
  repaired?: boolean;
}

export interface DoctorReport {
  path: string;
  /** No finding needs attention (after repairs, when they ran). */
  healthy: boolean;
  findings: Finding[];
}

const ANN_MIN_ROWS = 50_000;

/** An embedder that only names the store's model: doctor reads and re-derives, it never embeds. */
function storeEmbedder(meta: StoreMeta): Embedder {
  return {
    id: meta.embedder.id,
    dimensions: meta.embedder.dimensions,
    truncatable: meta.embedder.truncatable,
    embed: () => Promise.reject(new MemcoreError('doctor does not embed', 'EMBEDDING')),
  };
}

/**
 * A meta.json for a folder that lost its own, from its entries table's vector sizes and the
 * configured embedder (which must give vectors of that size). The generation starts again at 1,
 * so the snapshots (derived, and keyed by generation) are removed; the source fingerprints are
 * empty, so the next ingest of each file writes it again rather than skipping it.
 */
async function rebuildMeta(dir: string, embedder: Embedder): Promise<string> {
  const sizes = await EntriesTable.vectorSizes(join(dir, 'lance'));
  if (!sizes)
    throw new MemcoreError(
      `${dir}: meta.json cannot be rebuilt: the entries table is missing too. Restore the folder from a backup.`,
      'STORE',
    );
  if (sizes.dimensions !== embedder.dimensions)
    throw new MemcoreError(
      `${dir}: meta.json cannot be rebuilt with the configured embedder ${embedder.id} (${embedder.dimensions}-d): the stored vectors are ${sizes.dimensions}-d. Configure the embedder the folder was built with (MEMCORE_EMBEDDER, memcore.config) and run the repair again.`,
      'MODEL_MISMATCH',
    );
  await rm(join(dir, 'snapshots'), { recursive: true, force: true });
  await writeMeta(dir, {
    formatVersion: 1,
    embedder: { id: embedder.id, dimensions: embedder.dimensions, truncatable: embedder.truncatable },
    smallDimensions: sizes.smallDimensions,
    generation: 1,
    sources: {},
  });
  return `meta.json rebuilt: embedder ${embedder.id} (${embedder.dimensions}-d, the configured one), ${sizes.smallDimensions}-d small vectors (from the entries table)`;
}

export async function doctor(dir: string, options: { repair?: boolean; embedder?: Embedder } = {}): Promise<DoctorReport> {
  const repair = options.repair === true;
  const findings: Finding[] = [];
  const report = (): DoctorReport => ({ path: dir, healthy: findings.every((f) => f.ok || f.repaired === true), findings });

  let meta: StoreMeta | null;
  try {
    meta = await readMeta(dir);
  } catch (e) {
    findings.push({
      check: 'meta',
      ok: false,
      message: `${(e as Error).message}. It records the embedding model and the small-vector length; without it the folder cannot be opened. Restore it from a backup.`,
    });
    return report();
  }
  if (!meta && holdsStores(dir)) {
    const finding: Finding = {
      check: 'meta',
      ok: false,
      message: missingMeta(dir).message.replace(/ Run `memcore doctor --repair`.*$/, ''),
      repair: 'rebuild meta.json from the entries table and the configured embedder',
    };
    if (!repair || !options.embedder) {
      findings.push(finding);
      return report();
    }
    finding.message = await rebuildMeta(dir, options.embedder);
    finding.repaired = true;
    const rest = await doctor(dir, options);
    return { ...rest, healthy: rest.healthy, findings: [finding, ...rest.findings] };
  }
  if (!meta) {
    findings.push({ check: 'meta', ok: false, message: `no memory at ${dir} (no meta.json)` });
    return report();
  }
  findings.push({
    check: 'meta',
    ok: true,
    message: `generation ${meta.generation}, embedder ${meta.embedder.id} (${meta.embedder.dimensions}-d), ${meta.smallDimensions}-d small vectors`,
  });

  const pending = await new Journal(join(dir, 'journal')).pending().catch((e: Error) => e);
  if (pending instanceof Error)
    findings.push({
      check: 'journal',
      ok: false,
      message: `${pending.message}. Restore the folder from a backup, or remove that journal file (the write it holds is then lost).`,
    });
  else if (pending.length > 0)
    findings.push({
      check: 'journal',
      ok: false,
      message: `${pending.length} write${pending.length === 1 ? '' : 's'} journaled but not finished (a process stopped mid-write); the next open replays ${pending.length === 1 ? 'it' : 'them'}`,
      repair: 'open the store, which replays the journal',
    });
  else findings.push({ check: 'journal', ok: true, message: 'no unfinished write' });

  const projectionProblem = await readProjectionProblem(dir, meta);
  findings.push(
    projectionProblem
      ? {
          check: 'projection',
          ok: false,
          message: projectionProblem,
          repair: 'fit it again from the stored vectors (as memcore index does)',
        }
      : { check: 'projection', ok: true, message: 'projection.json fits the store' },
  );

  const hasLance =
    existsSync(join(dir, 'lance', 'entries.lance', '_versions')) &&
    readdirSync(join(dir, 'lance', 'entries.lance', '_versions')).length > 0;
  const graphDriver = graphDriverOf(meta);
  const graphFile = graphFileName(graphDriver);
  const hasGraph = existsSync(join(dir, graphFile));
  let table: EntriesTable | undefined;
  let graph: ResidentGraph | undefined;
  try {
    let lanceIds: string[] | undefined;
    if (!hasLance && meta.generation > 0) {
      findings.push({
        check: 'entries',
        ok: false,
        message:
          'lance/entries.lance is missing: the entries (text, vectors) are gone. Restore the folder from a backup, or ingest the memory files (or an export) into a new folder.',
      });
    } else {
      try {
        table = await EntriesTable.open(join(dir, 'lance'), meta.embedder.dimensions, meta.smallDimensions);
        lanceIds = (await table.read({})).map((s) => s.entry.id);
        findings.push({ check: 'entries', ok: true, message: `${lanceIds.length} entries readable` });
      } catch (e) {
        findings.push({ check: 'entries', ok: false, message: `${(e as Error).message.split('\n')[0]}` });
      }
    }

    let graphIds: string[] | undefined;
    if (!hasGraph && meta.generation > 0) {
      findings.push({
        check: 'graph',
        ok: false,
        message: `${graphFile} is missing: relations, code locations and golden paths are gone (only a backup, an export or the memory files hold them)`,
        ...(lanceIds
          ? { repair: `create the graph with a node for each of the ${lanceIds.length} entries (without their relations)` }
          : {}),
      });
    } else {
      try {
        graph = await openGraphStore(graphDriver, join(dir, graphFile));
        graphIds = await graph.entryIds();
        const counts = await graph.counts();
        const relations = Object.values(counts.relations).reduce((a, b) => a + b, 0);
        findings.push({
          check: 'graph',
          ok: true,
          message: `${graphIds.length} entries, ${relations} relations, ${counts.codeLocations} code locations, ${counts.goldenPaths} golden paths`,
        });
      } catch (e) {
        findings.push({ check: 'graph', ok: false, message: `${(e as Error).message.split('\n')[0]}` });
      }
    }

    if (lanceIds && graphIds) findings.push(...agreementFindings(lanceIds, graphIds));
    if (table) findings.push(await indexFindings(table, lanceIds?.length ?? 0));

    if (!repair) return report();
    table?.close();
    table = undefined;
    await graph?.close();
    graph = undefined;
    await repairStore(dir, meta, findings);
    return report();
  } finally {
    table?.close();
    await graph?.close();
  }
}

/** Whether the table and the graph hold the same entries. */
function agreementFindings(lanceIds: string[], graphIds: string[]): Finding[] {
  const inGraph = new Set(graphIds);
  const inTable = new Set(lanceIds);
  const onlyTable = lanceIds.filter((id) => !inGraph.has(id));
  const onlyGraph = graphIds.filter((id) => !inTable.has(id));
  const sample = (ids: string[]) =>
    ids
      .slice(0, 5)
      .map((id) => JSON.stringify(id))
      .join(', ') + (ids.length > 5 ? ', …' : '');
  const findings: Finding[] = [];
  if (onlyTable.length === 0 && onlyGraph.length === 0)
    findings.push({ check: 'agreement', ok: true, message: 'the table and the graph hold the same entries' });
  if (onlyTable.length > 0)
    findings.push({
      check: 'agreement',
      ok: false,
      message: `${onlyTable.length} entries in the table have no graph node (${sample(onlyTable)}): searches find them, the graph never reaches them`,
      repair: 'add their graph nodes from the table (their relations, if they had any, only a backup holds)',
    });
  if (onlyGraph.length > 0)
    findings.push({
      check: 'agreement',
      ok: false,
      message: `${onlyGraph.length} graph nodes have no entry in the table (${sample(onlyGraph)}): their text is gone`,
      repair: 'remove those nodes and their edges (their text only a backup holds)',
    });
  return findings;
}

async function indexFindings(table: EntriesTable, rows: number): Promise<Finding> {
  const indexes = await table.indexHealth().catch(() => []);
  const behind = indexes.filter((i) => i.unindexedRows > 0);
  const annMissing = rows >= ANN_MIN_ROWS && !indexes.some((i) => i.column === 'vector_small');
  if (behind.length === 0 && !annMissing)
    return {
      check: 'indexes',
      ok: true,
      message: indexes.length ? `${indexes.length} indexes, up to date` : 'no indexes (a scan serves at this size)',
    };
  return {
    check: 'indexes',
    ok: false,
    message: [
      annMissing ? `${rows} entries and no ANN index on vector_small` : '',
      ...behind.map((i) => `${i.unindexedRows} rows not yet in the index on ${i.column}`),
    ]
      .filter(Boolean)
      .join('; '),
    repair: 'build the indexes again (memcore index)',
  };
}

/**
 * The checks a process serving the folder can run on its open stores, with what it holds in
 * memory compared against them (no repair: that needs the folder to itself).
 */
export async function checkOpenStores(stores: Stores): Promise<DoctorReport> {
  const findings: Finding[] = [];
  const meta = stores.meta;
  findings.push({
    check: 'meta',
    ok: true,
    message: `generation ${meta.generation}, embedder ${meta.embedder.id} (${meta.embedder.dimensions}-d), ${meta.smallDimensions}-d small vectors`,
  });
  const pending = await new Journal(join(stores.dir, 'journal')).pending();
  findings.push(
    pending.length === 0
      ? { check: 'journal', ok: true, message: 'no unfinished write' }
      : { check: 'journal', ok: false, message: `${pending.length} journaled writes not finished while the folder is served` },
  );
  const lanceIds = (await stores.table.read({})).map((s) => s.entry.id);
  findings.push({ check: 'entries', ok: true, message: `${lanceIds.length} entries readable` });
  const graphIds = await stores.graph.entryIds();
  findings.push({ check: 'graph', ok: true, message: `${graphIds.length} entries` });
  findings.push(...agreementFindings(lanceIds, graphIds), await indexFindings(stores.table, lanceIds.length));
  const columns = await stores.columns();
  const keywords = await stores.keywords();
  const held = { columns: columns.size, keywords: keywords.size };
  findings.push(
    held.columns === lanceIds.length && held.keywords === lanceIds.length
      ? { check: 'resident', ok: true, message: `what is held in memory matches the table (${lanceIds.length} entries)` }
      : {
          check: 'resident',
          ok: false,
          message: `held in memory: ${held.columns} entry columns and ${held.keywords} keyword documents, against ${lanceIds.length} rows; restart the server to reload them`,
        },
  );
  return { path: stores.dir, healthy: findings.every((f) => f.ok), findings };
}

/** Carries out the repairs the findings name, marking each done. */
async function repairStore(dir: string, meta: StoreMeta, findings: Finding[]): Promise<void> {
  const wanted = (check: string) => findings.filter((f) => f.check === check && !f.ok && f.repair !== undefined);
  const missingGraph = wanted('graph');
  if (missingGraph.length > 0) {
    // An empty graph file makes the folder openable; the nodes are written below with the others.
    const graph = await openGraphStore(graphDriverOf(meta), join(dir, graphFileName(graphDriverOf(meta))));
    await graph.close();
  }
  const projectionDamaged = wanted('projection').length > 0;
  if (projectionDamaged) await rm(join(dir, 'projection.json'), { force: true });
  // Opening replays an unfinished write from the journal.
  const stores = await Stores.open(dir, storeEmbedder(meta));
  try {
    for (const f of wanted('journal')) f.repaired = true;
    const lanceIds = (await stores.table.read({})).map((s) => s.entry);
    const graphIds = new Set(await stores.graph.entryIds());
    const tableIds = new Set(lanceIds.map((e) => e.id));
    const missingNodes = lanceIds.filter((e) => !graphIds.has(e.id));
    const orphans = [...graphIds].filter((id) => !tableIds.has(id));
    if (missingNodes.length > 0) {
      await stores.graph.write({
        entries: missingNodes.map((e) => ({ id: e.id, coreId: e.coreId, title: e.title, entryType: e.entryType })),
        codeLocations: [],
        goldenPaths: [],
        relations: [],
      });
    }
    if (orphans.length > 0) await stores.graph.deleteEntries(orphans);
    for (const f of [...wanted('agreement'), ...missingGraph]) f.repaired = true;
    if (projectionDamaged || wanted('indexes').length > 0) {
      await stores.refitProjection();
      await stores.table.buildIndexes({ annMinRows: ANN_MIN_ROWS });
      for (const f of [...wanted('indexes'), ...wanted('projection')]) f.repaired = true;
    }
  } finally {
    await stores.close();
  }
  // Every process's caches are keyed by the generation: a repaired store is a new one.
  const fresh = await readMeta(dir);
  if (fresh) await writeMeta(dir, { ...fresh, generation: fresh.generation + 1 });
}

async function readProjectionProblem(dir: string, meta: StoreMeta): Promise<string | undefined> {
  try {
    await Stores.checkProjection(dir, meta);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
