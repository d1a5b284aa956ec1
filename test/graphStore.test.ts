import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../src/embed/matryoshka.js';
import type { EntryEdgeType, Relation } from '../src/model/types.js';
import type { Direction, GraphEdge, GraphHit } from '../src/store/graph/graphStore.js';
import { CypherGraphDriver, type NativeQueryResult, type NativeValue } from '../src/store/graph/cypherGraphDriver.js';
import { GRAPH_DRIVERS, graphBinding, graphFileName, openGraphStore } from '../src/store/graph/drivers.js';
import { CodeLinks, type CodeLinksData } from '../src/store/graph/codeLinks.js';
import { tempDir } from './helpers.js';

// Every test runs on each graph database a folder can be kept in (store/graph/drivers.ts).
describe.each(GRAPH_DRIVERS)('graph driver %s', (driver) => {
  describe('graph store', () => {
    it('edgesAmong returns exactly the edges between the given entries, with type and weight', async () => {
      const g = await openGraphStore(driver, join(await tempDir(), graphFileName(driver)));
      try {
        const ids = ['a', 'b', 'c', 'd', "it's \\ ünï"];
        await g.write({
          entries: ids.map((id) => ({ id, coreId: 'c', title: id, entryType: 'lesson' })),
          codeLocations: [],
          goldenPaths: [],
          relations: [
            { type: 'RELATED', from: 'a', to: 'b', weight: 0.25 },
            { type: 'DEPENDS_ON', from: 'b', to: "it's \\ ünï" },
            { type: 'SUPERSEDES', from: 'a', to: "it's \\ ünï" },
            { type: 'RELATED', from: 'c', to: 'd', weight: 0.5 }, // d is not asked for
          ],
        });
        const edges = await g.edgesAmong(['a', 'b', "it's \\ ünï", 'c', 'missing'], ['RELATED', 'DEPENDS_ON']);
        expect(edges.sort((x, y) => x.from.localeCompare(y.from))).toEqual([
          { from: 'a', to: 'b', type: 'RELATED', weight: 0.25 },
          { from: 'b', to: "it's \\ ünï", type: 'DEPENDS_ON', weight: 1 },
        ]);
        expect(await g.edgesAmong(['a', 'missing'], ['RELATED'])).toEqual([]);
        // edge types without a weight property (the weight column exists only on RELATED)
        expect(await g.edgesAmong(['a', "it's \\ ünï"], ['SUPERSEDES'])).toEqual([
          { from: 'a', to: "it's \\ ünï", type: 'SUPERSEDES', weight: 1 },
        ]);
      } finally {
        await g.close();
      }
    });
  });

  describe('bulk writes (rows sent column by column)', () => {
    it('store every value as given, in its row, through the COPY of new rows and the update of existing ones', async () => {
      const file = join(await tempDir(), graphFileName(driver));
      const hostile = [
        "it's",
        'a "quote"',
        'back\\slash',
        'line\nbreak\ttab',
        '`tick` {brace} $c0[i] ROWS',
        'ünïcödé e\u0301 漢字 🧠👩‍💻',
        '',
      ];
      const entry = (i: number, v = '') => ({
        id: `id ${hostile[i]}`,
        coreId: `core ${hostile[(i + 1) % hostile.length]}`,
        title: `${v}title ${hostile[(i + 2) % hostile.length]}`,
        entryType: hostile[(i + 3) % hostile.length]!,
      });
      const ids = hostile.map((_, i) => entry(i).id);
      // integer-looking and fractional weights mixed: each column binds by its first value
      const related = (w: number[]) =>
        ids.map((from, i) => ({
          type: 'RELATED' as const,
          from,
          to: ids[(i + 1) % ids.length]!,
          weight: w[i % w.length]!,
          kind: hostile[i]!,
        }));
      const g = await openGraphStore(driver, file);
      try {
        await g.write({
          entries: hostile.map((_, i) => entry(i)),
          codeLocations: [
            {
              id: 'c1',
              codebaseId: hostile[0]!,
              filePath: hostile[3]!,
              symbol: null,
              startLine: 3,
              endLine: null,
              language: hostile[5]!,
              kind: 'function',
              fingerprint: 'ab'.repeat(8),
              revision: hostile[2]!,
            },
          ],
          goldenPaths: [{ id: 'p1', name: hostile[4]!, concept: null, description: hostile[1]! }],
          relations: [
            ...related([1, 0.9, 0.25]),
            { type: 'PATH_STEP', from: 'p1', to: 'c1', stepOrder: 2, description: hostile[5]!, keyConcepts: [hostile[0]!, hostile[4]!] },
          ],
        });
        // the same ids again: every row exists, so this goes through the update query
        await g.write({
          entries: hostile.map((_, i) => entry(i, 'v2 ')),
          codeLocations: [],
          goldenPaths: [],
          relations: related([0.5, 2]),
        });
        const path = await g.getGoldenPath('p1');
        expect(path).toMatchObject({ name: hostile[4], concept: null, description: hostile[1] });
        expect(
          path?.steps.map((s) => [
            s.order,
            s.description,
            s.keyConcepts,
            s.code.filePath,
            s.code.codebaseId,
            s.code.language,
            s.code.startLine,
            s.code.endLine,
            s.code.fingerprint,
          ]),
        ).toEqual([[2, hostile[5], [hostile[0], hostile[4]], hostile[3], hostile[0], hostile[5], 3, null, 'ab'.repeat(8)]]);
      } finally {
        await g.close();
      }
      const db = new (await graphBinding(driver)).Database(file);
      const conn = new (await graphBinding(driver)).Connection(db);
      try {
        const rows = async (q: string) =>
          (await ((await conn.query(q)) as NativeQueryResult).getAllSync()) as Record<string, NativeValue>[];
        const entries = await rows('MATCH (e:MemoryEntry) RETURN e.id AS id, e.core_id AS core, e.title AS title, e.entry_type AS type');
        expect(entries.sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual(
          hostile
            .map((_, i) => entry(i, 'v2 '))
            .map((e) => ({ id: e.id, core: e.coreId, title: e.title, type: e.entryType }))
            .sort((a, b) => a.id.localeCompare(b.id)),
        );
        const edges = await rows(
          'MATCH (a:MemoryEntry)-[r:RELATED]->(b:MemoryEntry) RETURN a.id AS from, b.id AS to, r.weight AS weight, r.kind AS kind',
        );
        expect(edges.sort((a, b) => String(a.from).localeCompare(String(b.from)))).toEqual(
          related([0.5, 2])
            .map(({ from, to, weight, kind }) => ({ from, to, weight, kind }))
            .sort((a, b) => a.from.localeCompare(b.from)),
        );
      } finally {
        await conn.close();
        await db.close();
      }
    });
  });

  describe('a write of new entries alone', () => {
    it('is one statement without a transaction, and an update or a link after it is a transaction', async () => {
      const exec = CypherGraphDriver.prototype['exec' as keyof CypherGraphDriver] as unknown as (this: unknown, s: string) => Promise<void>;
      const statements: string[] = [];
      const counting = function (this: unknown, s: string) {
        statements.push(s);
        return exec.call(this, s);
      };
      const g = await openGraphStore(driver, join(await tempDir(), graphFileName(driver)));
      (CypherGraphDriver.prototype as unknown as Record<string, unknown>).exec = counting;
      try {
        const entry = (id: string, title = id) => ({ id, coreId: 'c', title, entryType: 'lesson' });
        await g.write({ entries: [entry('n1'), entry('n2')], codeLocations: [], goldenPaths: [], relations: [] });
        expect(statements).toEqual([]);
        expect((await g.existingIds('entry', ['n1', 'n2', 'n3'])).size).toBe(2);
        // An entry that exists is updated in place (a transaction), and so is a write with a link.
        await g.write({ entries: [entry('n1', 'renamed')], codeLocations: [], goldenPaths: [], relations: [] });
        await g.write({
          entries: [entry('n3')],
          codeLocations: [],
          goldenPaths: [],
          relations: [{ type: 'RELATED', from: 'n3', to: 'n1' }],
        });
        expect(statements).toEqual(['BEGIN TRANSACTION', 'COMMIT', 'BEGIN TRANSACTION', 'COMMIT']);
        expect(await g.edgesAmong(['n1', 'n3'], ['RELATED'])).toEqual([{ from: 'n3', to: 'n1', type: 'RELATED', weight: 1 }]);
        expect(await g.entryIds()).toEqual(expect.arrayContaining(['n1', 'n2', 'n3']));
      } finally {
        (CypherGraphDriver.prototype as unknown as Record<string, unknown>).exec = exec;
        await g.close();
      }
    });
  });

  describe('entry edges in memory', () => {
    it('answer reach, edgesAmong and supersededBy as the database itself does, across upserts and deletes', async () => {
      const file = join(await tempDir(), graphFileName(driver));
      const rand = mulberry32(11);
      const ids = Array.from({ length: 40 }, (_, i) => (i % 7 === 0 ? `e'${i} \\ ü` : `e${i}`));
      const pick = () => ids[Math.floor(rand() * ids.length)]!;
      const types = ['RELATED', 'DEPENDS_ON', 'SUPERSEDES'] as const;
      const randomEdges = (n: number) =>
        Array.from({ length: n }, () => {
          const type = types[Math.floor(rand() * types.length)]!;
          return type === 'RELATED'
            ? { type, from: pick(), to: pick(), weight: Math.round(rand() * 100) / 100 }
            : { type, from: pick(), to: pick() };
        });
      const g = await openGraphStore(driver, file);
      const seedSets = [[ids[0]!, ids[1]!], [ids[7]!], ids.slice(10, 15)];
      const asked: { seeds: string[]; depth: number; edgeTypes: EntryEdgeType[]; direction: Direction }[] = [];
      for (const seeds of seedSets) {
        for (const depth of [1, 2, 3]) {
          for (const direction of ['both', 'outgoing', 'incoming'] as const)
            asked.push({ seeds, depth, direction, edgeTypes: depth === 2 ? ['RELATED', 'DEPENDS_ON'] : [...types] });
        }
      }
      let inMemory: { reach: string[][]; edges: string[]; supersededBy: [string, string][]; entries: string[] };
      try {
        const write = (relations: Relation[]) => g.write({ entries: [], codeLocations: [], goldenPaths: [], relations });
        await g.write({
          entries: ids.map((id) => ({ id, coreId: 'c', title: id, entryType: 'lesson' })),
          codeLocations: [],
          goldenPaths: [],
          relations: randomEdges(40),
        });
        expect((await g.edgesAmong(ids, [...types])).length).toBeGreaterThan(30); // loaded from the database here
        await write(randomEdges(40)); // some pairs again, with new weights
        await g.deleteEntries([ids[3]!, ids[20]!]);
        await write(randomEdges(20).filter((e) => ![ids[3], ids[20]].includes(e.from) && ![ids[3], ids[20]].includes(e.to)));
        // an existing entry renamed beside a new one: one update, one insert
        await g.write({
          entries: [
            { id: ids[5]!, coreId: 'c', title: 'renamed', entryType: 'lesson' },
            { id: 'new', coreId: 'c', title: 'new', entryType: 'fact' },
          ],
          codeLocations: [],
          goldenPaths: [],
          relations: [],
        });
        inMemory = {
          reach: await Promise.all(asked.map(async (q) => hitKeys(await g.reach(q.seeds, q)))),
          edges: edgeKeys(await g.edgesAmong(ids, [...types])),
          supersededBy: [...(await g.supersededBy(ids))].sort(),
          entries: [...(await g.existingIds('entry', [...ids, 'new', 'missing']))].sort(),
        };
      } finally {
        await g.close();
      }

      // What the database answers itself, on the database the store left behind.
      const db = new (await graphBinding(driver)).Database(file);
      const conn = new (await graphBinding(driver)).Connection(db);
      const cypher = async (query: string, params: Record<string, NativeValue> = {}) => {
        const result = (await conn.execute(await conn.prepare(query), params)) as NativeQueryResult;
        try {
          return result.getAllSync();
        } finally {
          result.close();
        }
      };
      try {
        for (const [i, q] of asked.entries()) {
          const [left, right] = { outgoing: ['-', '->'], incoming: ['<-', '-'], both: ['-', '-'] }[q.direction];
          const rows = await cypher(
            `MATCH (s:MemoryEntry)${left}[p:${q.edgeTypes.join('|')}* SHORTEST 1..${q.depth}]${right}(t:MemoryEntry) WHERE s.id IN $seeds AND t.id <> s.id RETURN s.id AS seedId, t.id AS targetId, length(p) AS hops`,
            { seeds: q.seeds },
          );
          expect(inMemory.reach[i], JSON.stringify(q)).toEqual(
            hitKeys(rows.map((r) => ({ seedId: String(r.seedId), targetId: String(r.targetId), hops: Number(r.hops) }))),
          );
        }
        expect(inMemory.reach.some((r) => r.length > 5)).toBe(true);
        const edges = await cypher(
          `MATCH (a:MemoryEntry)-[r]->(b:MemoryEntry) RETURN a.id AS from, b.id AS to, label(r) AS type, CASE WHEN label(r) = 'RELATED' THEN r.weight ELSE 1.0 END AS weight`,
        );
        expect(inMemory.edges).toEqual(
          edgeKeys(edges.map((r) => ({ from: String(r.from), to: String(r.to), type: r.type as EntryEdgeType, weight: Number(r.weight) }))),
        );
        const superseding = await cypher(
          'MATCH (n:MemoryEntry)-[:SUPERSEDES]->(o:MemoryEntry) WHERE n.id <> o.id RETURN o.id AS old, min(n.id) AS newer',
        );
        expect(inMemory.supersededBy).toEqual(superseding.map((r) => [String(r.old), String(r.newer)]).sort());
        const nodes = await cypher('MATCH (e:MemoryEntry) RETURN e.id AS id, e.title AS title');
        expect(inMemory.entries).toEqual(nodes.map((r) => String(r.id)).sort());
        expect(inMemory.entries).toHaveLength(ids.length - 2 + 1);
        expect(nodes.find((r) => r.id === ids[5])?.title).toBe('renamed');
      } finally {
        await conn.close();
        await db.close();
      }
    });
  });

  const hitKeys = (hits: GraphHit[]) => hits.map((h) => `${h.seedId} → ${h.targetId} in ${h.hops}`).sort();
  const edgeKeys = (edges: GraphEdge[]) => edges.map((e) => `${e.type} ${e.from} → ${e.to} ${e.weight}`).sort();

  describe('code links in memory', () => {
    it('follow writes of code, golden paths and references, and deletes', async () => {
      const g = await openGraphStore(driver, join(await tempDir(), graphFileName(driver)));
      const code = (id: string, symbol: string) => ({
        id,
        codebaseId: 'api',
        filePath: `src/${symbol}.ts`,
        symbol,
        startLine: 1,
        endLine: 9,
        language: 'ts',
        kind: null,
        fingerprint: null,
        revision: null,
      });
      const none = { entries: [], codeLocations: [], goldenPaths: [], relations: [] };
      try {
        await g.write({
          ...none,
          entries: ['a', 'b', "c'\\ü"].map((id) => ({ id, coreId: 'c', title: id, entryType: 'lesson' })),
          codeLocations: [code('c1', 'refresh')],
          goldenPaths: [{ id: 'p1', name: 'Refresh flow', concept: 'auth', description: null }],
          relations: [
            { type: 'REFERENCES_CODE', from: 'a', to: 'c1', relevance: 0.5 },
            { type: 'IMPLEMENTS', from: "c'\\ü", to: 'p1' },
            { type: 'PATH_STEP', from: 'p1', to: 'c1', stepOrder: 1, description: 'start here' },
          ],
        });
        expect((await g.codeReferencesOf(['a', 'b'])).map((r) => [r.entryId, r.code.symbol, r.relevance])).toEqual([['a', 'refresh', 0.5]]);
        // a new location and reference, and a changed relevance, after the links were loaded
        await g.write({
          ...none,
          codeLocations: [code('c2', 'rotate')],
          relations: [
            { type: 'REFERENCES_CODE', from: 'b', to: 'c2' },
            { type: 'REFERENCES_CODE', from: 'a', to: 'c1', relevance: 0.9 },
          ],
        });
        expect((await g.codeReferencesOf(['a', 'b'])).map((r) => [r.entryId, r.code.symbol, r.relevance])).toEqual([
          ['a', 'refresh', 0.9],
          ['b', 'rotate', 1],
        ]);
        await g.write({
          ...none,
          relations: [
            { type: 'PATH_STEP', from: 'p1', to: 'c2', stepOrder: 2 },
            { type: 'IMPLEMENTS', from: 'a', to: 'p1' },
          ],
        });
        const [path] = await g.goldenPathsOf(["c'\\ü", 'a', 'b']);
        expect(path?.entryIds).toEqual(["c'\\ü", 'a']);
        expect(path?.steps.map((s) => [s.order, s.code.symbol, s.description])).toEqual([
          [1, 'refresh', 'start here'],
          [2, 'rotate', null],
        ]);
        await g.deleteEntries(['a']);
        expect((await g.codeReferencesOf(['a', 'b'])).map((r) => r.entryId)).toEqual(['b']);
        expect((await g.goldenPathsOf(['a', "c'\\ü"]))[0]?.entryIds).toEqual(["c'\\ü"]);
      } finally {
        await g.close();
      }
    });
  });

  describe('code edges written alone', () => {
    it('are kept in step in memory, answer as a reload does, and are stored once however often written', async () => {
      const file = join(await tempDir(), graphFileName(driver));
      const rand = mulberry32(17);
      const entries = Array.from({ length: 25 }, (_, i) => (i % 6 === 0 ? `e'${i} ü` : `e${i}`));
      const code = Array.from({ length: 8 }, (_, i) => ({
        id: `c${i}`,
        codebaseId: 'api',
        filePath: `src/m${i}.ts`,
        symbol: `fn${i}`,
        startLine: 1,
        endLine: 5,
        language: 'ts',
        kind: null,
        fingerprint: null,
        revision: null,
      }));
      const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
      const none = { entries: [], codeLocations: [], goldenPaths: [], relations: [] };
      // what the database should hold: the last relevance of each pair, one IMPLEMENTS per pair
      const references = new Map<string, number>();
      const implementations = new Set<string>();
      const g = await openGraphStore(driver, file);
      try {
        await g.write({
          ...none,
          entries: entries.map((id) => ({ id, coreId: 'c', title: id, entryType: 'lesson' })),
          codeLocations: code,
          goldenPaths: [
            { id: 'p1', name: 'one', concept: null, description: null },
            { id: 'p2', name: 'two', concept: null, description: null },
          ],
        });
        expect(await g.codeReferencesOf(entries)).toEqual([]); // the links are loaded before the writes below
        for (let round = 0; round < 6; round++) {
          const relations: Relation[] = Array.from({ length: 20 }, () => {
            if (rand() < 0.2) return { type: 'IMPLEMENTS' as const, from: pick(entries), to: pick(['p1', 'p2']) };
            return { type: 'REFERENCES_CODE' as const, from: pick(entries), to: pick(code).id, relevance: pick([0.25, 0.5, 1]) };
          });
          if (round === 3) relations.push({ type: 'RELATED', from: entries[1]!, to: entries[2]!, weight: 0.5 }); // with entry edges too
          await g.write({ ...none, relations });
          for (const r of relations) {
            if (r.type === 'REFERENCES_CODE') references.set(`${r.from} ${r.to}`, r.relevance ?? 1);
            if (r.type === 'IMPLEMENTS') implementations.add(`${r.from} ${r.to}`);
          }
          if (round === 4) {
            await g.deleteEntries([entries[3]!]);
            for (const key of [...references.keys()]) if (key.startsWith(`${entries[3]} `)) references.delete(key);
            for (const key of [...implementations]) if (key.startsWith(`${entries[3]} `)) implementations.delete(key);
          }
          const live = entries.filter((_, i) => round < 4 || i !== 3);
          const held = (await g.codeReferencesOf(live)).map((r) => `${r.entryId} ${r.code.id} ${r.relevance}`).sort();
          expect(held, `round ${round}`).toEqual([...references].map(([k, v]) => `${k} ${v}`).sort());
          const paths = (await g.goldenPathsOf(live)).flatMap((p) => p.entryIds.map((e) => `${e} ${p.id}`)).sort();
          expect(paths, `round ${round}`).toEqual([...implementations].sort());
          const counts = await g.counts();
          expect(counts.relations.REFERENCES_CODE, `round ${round}`).toBe(references.size);
          expect(counts.relations.IMPLEMENTS, `round ${round}`).toBe(implementations.size);
        }
      } finally {
        await g.close();
      }
      // a fresh store builds the links from the database: the same answers
      const again = await openGraphStore(driver, file);
      try {
        const held = (await again.codeReferencesOf(entries)).map((r) => `${r.entryId} ${r.code.id} ${r.relevance}`).sort();
        expect(held).toEqual([...references].map(([k, v]) => `${k} ${v}`).sort());
      } finally {
        await again.close();
      }
    });
  });

  describe('a graph made before code locations had a kind and a fingerprint', () => {
    it('gains both columns when opened, keeps its rows, and takes new ones', async () => {
      const file = join(await tempDir(), graphFileName(driver));
      const old = new (await graphBinding(driver)).Database(file);
      const conn = new (await graphBinding(driver)).Connection(old);
      for (const statement of [
        'CREATE NODE TABLE CodeLocation(id STRING, codebase_id STRING, file_path STRING, symbol STRING, start_line INT64, end_line INT64, language STRING, PRIMARY KEY(id))',
        "CREATE (:CodeLocation {id: 'old', codebase_id: 'api', file_path: 'src/a.ts', symbol: 'f', start_line: 1, end_line: 2, language: 'ts'})",
      ])
        ((await conn.query(statement)) as NativeQueryResult).close();
      await conn.close();
      await old.close();

      const g = await openGraphStore(driver, file);
      try {
        const fresh = {
          id: 'new',
          codebaseId: 'api',
          filePath: 'src/b.ts',
          symbol: 'g',
          startLine: 3,
          endLine: 9,
          language: 'ts',
          kind: 'function',
          fingerprint: 'cd'.repeat(8),
          revision: 'a1b2c3d',
        };
        await g.write({ entries: [], codeLocations: [fresh], goldenPaths: [], relations: [] });
        const all = (await g.allCodeLocations()).sort((a, b) => a.id.localeCompare(b.id));
        expect(all).toEqual([
          fresh,
          {
            id: 'old',
            codebaseId: 'api',
            filePath: 'src/a.ts',
            symbol: 'f',
            startLine: 1,
            endLine: 2,
            language: 'ts',
            kind: null,
            fingerprint: null,
            revision: null,
          },
        ]);
      } finally {
        await g.close();
      }
    });
  });

  describe('code references held in memory', () => {
    it('find the entries on matching code as the stored references say, across writes and deletes', async () => {
      const g = await openGraphStore(driver, join(await tempDir(), graphFileName(driver)));
      const rand = mulberry32(3);
      const entries = Array.from({ length: 30 }, (_, i) => `e${i}`);
      const code = Array.from({ length: 12 }, (_, i) => ({
        id: `c${i}`,
        codebaseId: i % 2 ? 'api' : 'web',
        filePath: `src/${['auth', 'orders', "it's"][i % 3]}/file${i}.ts`,
        symbol: i % 4 === 0 ? 'handler' : `fn${i}`,
        startLine: i % 5 === 0 ? null : 10 - (i % 4),
        endLine: null,
        language: 'ts',
        kind: null,
        fingerprint: null,
        revision: null,
      }));
      const references = entries.flatMap((from) =>
        code
          .filter(() => rand() < 0.2)
          .map((c) => ({ type: 'REFERENCES_CODE' as const, from, to: c.id, relevance: [0.5, 1, 0.25][Math.floor(rand() * 3)]! })),
      );
      try {
        await g.write({
          entries: entries.map((id) => ({ id, coreId: 'c', title: id, entryType: 'lesson' })),
          codeLocations: code,
          goldenPaths: [],
          relations: references,
        });
        const queries = [
          { filePath: 'src/auth/' },
          { filePath: "it's" },
          { symbol: 'handler' },
          { codebaseId: 'api', symbol: 'handler' },
          { filePath: 'nowhere' },
        ];
        const expected = (live: typeof references) => (q: { filePath?: string; symbol?: string; codebaseId?: string }) =>
          live
            .map((r) => ({ r, c: code.find((c) => c.id === r.to)! }))
            .filter(
              ({ c }) =>
                (q.filePath === undefined || c.filePath.includes(q.filePath)) &&
                (q.symbol === undefined || c.symbol === q.symbol) &&
                (q.codebaseId === undefined || c.codebaseId === q.codebaseId),
            )
            .map(({ r }) => `${r.from} ${r.to} ${r.relevance}`)
            .sort();
        const got = async (q: (typeof queries)[number]) =>
          (await g.findByCodeReference(q)).map((r) => `${r.entryId} ${r.code.id} ${r.relevance}`);
        for (const q of queries) {
          expect((await got(q)).slice().sort(), JSON.stringify(q)).toEqual(expected(references)(q));
          const relevances = (await g.findByCodeReference(q)).map((r) => r.relevance);
          expect(relevances).toEqual([...relevances].sort((a, b) => b - a));
        }
        await g.deleteEntries(['e1', 'e2', 'e3']);
        const live = references.filter((r) => !['e1', 'e2', 'e3'].includes(r.from));
        for (const q of queries) expect((await got(q)).sort(), JSON.stringify(q)).toEqual(expected(live)(q));
      } finally {
        await g.close();
      }
    });
  });
});

describe('code links', () => {
  it('tell which code edges exist alike from a snapshot and from their maps, before and after an upsert', () => {
    const rand = mulberry32(5);
    const entries = Array.from({ length: 60 }, (_, i) => `e${i}`);
    const codeIds = Array.from({ length: 15 }, (_, i) => `c${i}`);
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
    // one reference per pair, as the database holds them
    const pairs = new Map(
      Array.from({ length: 120 }, () => ({ entryId: pick(entries), codeId: pick(codeIds), relevance: rand() })).map((r) => [
        `${r.entryId} ${r.codeId}`,
        r,
      ]),
    );
    const references = [...pairs.values()];
    const data: CodeLinksData = {
      references,
      implementations: [{ entryId: 'e1', pathId: 'p1' }],
      codeLocations: codeIds.map((id) => ({
        id,
        codebaseId: 'api',
        filePath: `${id}.ts`,
        symbol: null,
        startLine: null,
        endLine: null,
        language: null,
        kind: null,
        fingerprint: null,
        revision: null,
      })),
      goldenPaths: [{ id: 'p1', name: 'one', concept: null, description: null, steps: [] }],
    };
    const fromMaps = new CodeLinks(data);
    const fromSnapshot = CodeLinks.fromSnapshot(new CodeLinks(data).snapshot());
    const asked = entries.flatMap((from) => codeIds.map((to) => ({ type: 'REFERENCES_CODE' as const, from, to })));
    asked.push({ type: 'IMPLEMENTS' as never, from: 'e1', to: 'p1' }, { type: 'IMPLEMENTS' as never, from: 'e2', to: 'p1' });
    const truth = (refs: typeof references) => (e: (typeof asked)[number]) =>
      e.type === 'REFERENCES_CODE' ? refs.some((r) => r.entryId === e.from && r.codeId === e.to) : e.from === 'e1';
    expect(asked.map((e) => fromSnapshot.has(e))).toEqual(asked.map(truth(references)));
    expect(asked.map((e) => fromMaps.has(e))).toEqual(asked.map(truth(references)));
    const added = Array.from({ length: 40 }, () => ({ entryId: pick(entries), codeId: pick(codeIds), relevance: 0.5 }));
    fromSnapshot.upsert(added, []);
    expect(asked.map((e) => fromSnapshot.has(e))).toEqual(asked.map(truth([...references, ...added])));
    const last = new Map([...references, ...added].map((r) => [`${r.entryId} ${r.codeId}`, r.relevance]));
    const answered = fromSnapshot.codeReferencesOf(entries).map((r) => `${r.entryId} ${r.code.id} ${r.relevance}`);
    expect(answered.sort()).toEqual([...last].map(([k, v]) => `${k} ${v}`).sort());
  });
});
