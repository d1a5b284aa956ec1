/**
 * What a user would build instead of memcore, on the same entries and the same vectors: LanceDB
 * on its own (flat vector search, native full-text search, and both fused by its RRFReranker)
 * and Orama in process (hybrid, vector and full-text). `npm run bench -- --peers` times them
 * beside memcore's methods; `npm run eval -- <set> --peers` scores them with memcore's metric code.
 *
 * Each is set up as its documentation recommends for English text, so that the comparison is
 * with its best, not its defaults: LanceDB's FTS index stems and drops stop words; Orama's
 * tokenizer stems, drops English stop words, and its vector search keeps every similarity
 * (`similarity: 0`; the default 0.8 drops most hits of a 512-d embedder). Orama is a
 * devDependency: in an installed package `--peers` says so and stops.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { MemcoreError } from '../model/errors.js';
import { sqlIn } from '../store/lance/filter.js';

export const PEERS = ['lancedb-vector', 'lancedb-fts', 'lancedb-hybrid', 'orama-hybrid', 'orama-vector', 'orama-fulltext'] as const;
export type PeerName = (typeof PEERS)[number];

/** One entry as every peer gets it: the text memcore embeds and searches, its vector, and its core (the filter an eval query may set). */
export interface PeerDocument {
  id: string;
  core: string;
  text: string;
  vector: Float32Array;
}

/** A peer's search: ids, best first. `cores` filters as memcore's `cores` option does. */
export interface Peer {
  name: PeerName;
  search(text: string, vector: Float32Array, k: number, cores?: readonly string[]): Promise<string[]>;
}

export interface PeerSet {
  peers: Peer[];
  /** Seconds each system took to build its index. */
  buildSeconds: Partial<Record<'lancedb' | 'orama', number>>;
  close(): Promise<void>;
}

const BATCH = 5_000;

/** Builds the asked peers over `documents` (LanceDB in a temp folder, Orama in this process). */
export async function buildPeers(
  documents: readonly PeerDocument[],
  names: readonly PeerName[] = PEERS,
  progress: (message: string) => void = () => undefined,
): Promise<PeerSet> {
  const peers: Peer[] = [];
  const buildSeconds: PeerSet['buildSeconds'] = {};
  const closers: (() => Promise<void>)[] = [];
  if (names.some((n) => n.startsWith('lancedb-'))) {
    const t = performance.now();
    const lance = await lanceDbPeers(documents, progress);
    buildSeconds.lancedb = (performance.now() - t) / 1000;
    closers.push(lance.close);
    peers.push(...lance.peers.filter((p) => names.includes(p.name)));
  }
  if (names.some((n) => n.startsWith('orama-'))) {
    const t = performance.now();
    peers.push(...(await oramaPeers(documents, progress)).filter((p) => names.includes(p.name)));
    buildSeconds.orama = (performance.now() - t) / 1000;
  }
  return {
    peers: names.flatMap((n) => peers.filter((p) => p.name === n)),
    buildSeconds,
    close: async () => void (await Promise.all(closers.map((c) => c()))),
  };
}

async function lanceDbPeers(
  documents: readonly PeerDocument[],
  progress: (message: string) => void,
): Promise<{ peers: Peer[]; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'memcore-peer-lancedb-'));
  const db = await lancedb.connect(dir);
  let table: lancedb.Table | undefined;
  for (let i = 0; i < documents.length; i += BATCH) {
    progress(`LanceDB: adding ${i}/${documents.length}`);
    const rows = documents.slice(i, i + BATCH).map((d) => ({ id: d.id, core: d.core, text: d.text, vector: Array.from(d.vector) }));
    if (!table) table = await db.createTable('peer', rows);
    else await table.add(rows);
  }
  if (!table) throw new MemcoreError('peers need at least one entry', 'INVALID_INPUT');
  progress('LanceDB: building the full-text index');
  await table.createIndex('text', { config: lancedb.Index.fts({ stem: true, removeStopWords: true, language: 'English' }) });
  const rrf = await lancedb.rerankers.RRFReranker.create();
  const t = table;
  const ids = async (q: { toArray(): Promise<{ id: string }[]> }) => (await q.toArray()).map((r) => String(r.id));
  const where = (cores?: readonly string[]) => (cores && cores.length > 0 ? sqlIn('core', cores) : undefined);
  // No vector index: a flat scan is exact, and LanceDB's own advice below ~100K rows.
  // The score column is selected where it can be, so that LanceDB does not warn on every query that it adds it.
  const vector = (v: Float32Array, k: number, cores?: readonly string[], columns = ['id', '_distance']) => {
    let q = t.vectorSearch(Array.from(v)).distanceType('cosine').select(columns).limit(k);
    const w = where(cores);
    if (w) q = q.where(w);
    return q;
  };
  const peers: Peer[] = [
    { name: 'lancedb-vector', search: (_text, v, k, cores) => ids(vector(v, k, cores)) },
    {
      name: 'lancedb-fts',
      search: (text, _v, k, cores) => {
        let q = t.query().fullTextSearch(text).select(['id', '_score']).limit(k);
        const w = where(cores);
        if (w) q = q.where(w);
        return ids(q);
      },
    },
    { name: 'lancedb-hybrid', search: (text, v, k, cores) => ids(vector(v, k, cores, ['id']).fullTextSearch(text).rerank(rrf)) },
  ];
  return {
    peers,
    close: async () => {
      t.close();
      db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

type OramaModule = typeof import('@orama/orama');

async function oramaPeers(documents: readonly PeerDocument[], progress: (message: string) => void): Promise<Peer[]> {
  let orama: OramaModule;
  let stopwords: string[];
  try {
    orama = await import('@orama/orama');
    stopwords = (await import('@orama/stopwords/english')).stopwords;
  } catch {
    throw new MemcoreError(
      'the Orama peers need @orama/orama and @orama/stopwords, which are devDependencies: run this from a clone after npm install',
      'INVALID_INPUT',
    );
  }
  const dimensions = documents[0]?.vector.length ?? 0;
  const db: import('@orama/orama').AnyOrama = orama.create({
    schema: { id: 'string', core: 'enum', text: 'string', embedding: `vector[${dimensions}]` } as const,
    components: { tokenizer: { language: 'english', stemming: true, stopWords: stopwords } },
  });
  for (let i = 0; i < documents.length; i += BATCH) {
    progress(`Orama: inserting ${i}/${documents.length}`);
    await orama.insertMultiple(
      db,
      documents.slice(i, i + BATCH).map((d) => ({ id: d.id, core: d.core, text: d.text, embedding: Array.from(d.vector) })),
      BATCH,
    );
  }
  const run = async (mode: 'hybrid' | 'vector' | 'fulltext', text: string, v: Float32Array, k: number, cores?: readonly string[]) => {
    const where = cores && cores.length > 0 ? { where: { core: { in: [...cores] } } } : {};
    const vector = { vector: { value: Array.from(v), property: 'embedding' }, similarity: 0 };
    const params =
      mode === 'fulltext'
        ? { term: text, properties: ['text'] }
        : mode === 'vector'
          ? { mode, ...vector }
          : { mode, term: text, properties: ['text'], ...vector };
    const result = await orama.search(db, { ...params, ...where, limit: k, includeVectors: false } as import('@orama/orama').SearchParams<
      typeof db
    >);
    return result.hits.map((h) => String((h.document as { id: string }).id));
  };
  return [
    { name: 'orama-hybrid', search: (text, v, k, cores) => run('hybrid', text, v, k, cores) },
    { name: 'orama-vector', search: (text, v, k, cores) => run('vector', text, v, k, cores) },
    { name: 'orama-fulltext', search: (text, v, k, cores) => run('fulltext', text, v, k, cores) },
  ];
}
