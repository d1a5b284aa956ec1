/**
 * Random writes, a kill -9 at a random point, and a check of what survived: a real writer process
 * (test/fixtures/writer.ts) applies a random sequence of upserts, links, supersessions and deletes
 * over several cores and sensitivities, and is killed right after one of its acknowledgements.
 * The folder must then hold exactly the acknowledged writes, or those and the one in flight; the
 * two stores must agree; and reads must respect cores and sensitivity against a plain model of
 * that state. Seeded (FC_SEED) and reproducible from the seed and path fast-check prints.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { doctorMemory, openMemory } from '../src/index.js';
import { GRAPH_DRIVERS, type GraphDriverName } from '../src/store/graph/drivers.js';
import { readMeta } from '../src/store/meta.js';
import { hashEmbedder, type WriteOp } from './fixtures/writer.js';
import { tempDir } from './helpers.js';
import { scriptArgs } from './cliProcess.js';

const writer = fileURLToPath(new URL('./fixtures/writer.ts', import.meta.url));
const IDS = ['a', 'b', 'c', 'd', 'e', 'f'];
const CORES = ['c1', 'c2', 'c3'];

interface ModelState {
  entries: Map<string, { core: string; sensitivity: string; word: string }>;
  edges: Set<string>;
}

function apply(state: ModelState, o: WriteOp): ModelState {
  const next: ModelState = { entries: new Map(state.entries), edges: new Set(state.edges) };
  if (o.op === 'upsert') next.entries.set(o.id, { core: o.core, sensitivity: o.sensitivity, word: o.word });
  else if (o.op === 'delete') {
    next.entries.delete(o.id);
    for (const e of next.edges) if (e.split(' ').slice(1).includes(o.id)) next.edges.delete(e);
  } else next.edges.add(`${o.type} ${o.from} ${o.to}`);
  return next;
}

const op: fc.Arbitrary<WriteOp> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('upsert' as const),
      id: fc.constantFrom(...IDS),
      core: fc.constantFrom(...CORES),
      sensitivity: fc.constantFrom('public' as const, 'internal' as const, 'secret' as const),
      word: fc.constant(''),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('link' as const),
      type: fc.constantFrom('RELATED' as const, 'SUPERSEDES' as const),
      from: fc.constantFrom(...IDS),
      to: fc.constantFrom(...IDS),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), id: fc.constantFrom(...IDS) }) },
);

/** Runs the writer until it has answered `killAfter + 1` operations, then kills it with SIGKILL; resolves with the answers. */
function runAndKill(opsFile: string, dir: string, killAfter: number, graph: GraphDriverName): Promise<('ok' | 'err')[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, scriptArgs(writer, [opsFile, dir, graph]), { stdio: ['ignore', 'pipe', 'pipe'] });
    const answers: ('ok' | 'err')[] = [];
    let err = '';
    let out = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const [answer] = out.slice(0, nl).split(' ');
        out = out.slice(nl + 1);
        answers.push(answer as 'ok' | 'err');
        if (answers.length === killAfter + 1) child.kill('SIGKILL');
      }
    });
    child.once('exit', (code, signal) =>
      signal === 'SIGKILL' || code === 0 ? resolve(answers) : reject(new Error(`writer exited with ${code}: ${err}`)),
    );
  });
}

describe.each(GRAPH_DRIVERS)('kill -9 during random writes (graph: %s)', (graph) => {
  it('keeps every acknowledged write, the stores in step, and reads within their filters', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 12 }), fc.nat(), async (drawn, k) => {
        const ops = drawn.map((o, i) => (o.op === 'upsert' ? { ...o, word: `zqw${run}x${i}` } : o));
        const killAfter = k % ops.length;
        const dir = join(await tempDir(), `db-${run++}`);
        const file = `${dir}.ops.json`;
        await writeFile(file, JSON.stringify(ops));
        const answers = await runAndKill(file, dir, killAfter, graph);
        expect((await readMeta(dir))?.graph).toBe(graph);

        let acknowledged: ModelState = { entries: new Map(), edges: new Set() };
        answers.forEach((a, i) => a === 'ok' && (acknowledged = apply(acknowledged, ops[i]!)));
        const inFlight = ops[answers.length];
        const candidates = [acknowledged, ...(inFlight ? [apply(acknowledged, inFlight)] : [])];

        const memory = await openMemory({ path: dir, embedder: hashEmbedder, env: {} }); // replays an unfinished write
        try {
          const doc = await memory.exportMemory({ sensitivity: ['public', 'internal', 'secret'] });
          const stored = {
            entries: Object.fromEntries(doc.entries!.map((e) => [e.id, { core: e.core_id, sensitivity: e.sensitivity, word: e.content }])),
            edges: doc.relations!.map((r) => `${r.type} ${r.from} ${r.to}`).sort(),
          };
          const shown = (s: ModelState) => ({
            entries: Object.fromEntries([...s.entries].sort(([a], [b]) => a.localeCompare(b))),
            edges: [...s.edges].sort(),
          });
          const state = candidates.find(
            (c) =>
              JSON.stringify(shown(c)) ===
              JSON.stringify({
                ...stored,
                entries: Object.fromEntries(Object.entries(stored.entries).sort(([a], [b]) => a.localeCompare(b))),
              }),
          );
          expect(state, `the folder holds neither the ${answers.length} acknowledged writes nor those and the one in flight`).toBeDefined();
          // The listing is what is in effect: not secret, and not superseded by an entry that exists.
          const superseded = new Set([...state!.edges].filter((e) => e.startsWith('SUPERSEDES ')).map((e) => e.split(' ')[2]!));
          for (const core of CORES) {
            const listed = (await memory.listEntries({ cores: [core] })).map((e) => e.id).sort();
            expect(listed).toEqual(
              [...state!.entries]
                .filter(([id, e]) => e.core === core && e.sensitivity !== 'secret' && !superseded.has(id))
                .map(([id]) => id)
                .sort(),
            );
          }
          // As of a time before any of it was written, there was nothing.
          expect(await memory.listEntries({ asOf: new Date(0) })).toEqual([]);
          // A search answers what is current, the same way.
          for (const [id, e] of state!.entries) {
            const found = (await memory.keywordSearch(e.word)).map((h) => h.entry.id);
            expect(found.includes(id), `keyword search for ${id}`).toBe(e.sensitivity !== 'secret' && !superseded.has(id));
            expect((await memory.keywordSearch(e.word, { asOf: new Date(0) })).length).toBe(0);
          }
        } finally {
          await memory.close();
        }
        expect((await doctorMemory(dir)).findings.filter((f) => !f.ok)).toEqual([]);
      }),
      { seed: Number(process.env.FC_SEED ?? 20261125), numRuns: Number(process.env.FC_RUNS ?? 6), verbose: true, endOnFailure: true },
    );
  }, 300_000);
});
