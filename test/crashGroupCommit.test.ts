/**
 * The crash property test (test/crashProperty.test.ts) for group commit: concurrent writers share
 * one engine, so their writes are committed in groups, and the process is killed with SIGKILL at a
 * random acknowledgement, with other writes in flight (queued, being prepared or mid-commit).
 * After the next open replays the journal, every acknowledged write is there exactly once, each
 * writer's writes are there in the order it sent them (what it was told, and at most the one it
 * was waiting for), nothing unacknowledged is half there (an entry without its link, one store
 * without the other), and doctor finds the stores in step.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { doctorMemory, openMemory } from '../src/index.js';
import { GRAPH_DRIVERS, type GraphDriverName } from '../src/store/graph/drivers.js';
import { groupEntry } from './fixtures/groupWriter.js';
import { hashEmbedder } from './fixtures/writer.js';
import { tempDir } from './helpers.js';
import { killWriterWhen } from './killWriter.js';

const writer = fileURLToPath(new URL('./fixtures/groupWriter.ts', import.meta.url));
const CLIENTS = 6;
const PER_CLIENT = 8;

/** Runs the writers until `killAfter + 1` writes were acknowledged, then SIGKILL; resolves with how many each writer was told of. */
async function runAndKill(dir: string, killAfter: number, graph: GraphDriverName): Promise<number[]> {
  const acked = Array<number>(CLIENTS).fill(0);
  let total = 0;
  await killWriterWhen(writer, [dir, String(CLIENTS), graph, String(PER_CLIENT)], (line) => {
    const [answer, client, i] = line.split(' ');
    if (answer !== 'ok') return false;
    // Each writer waits for one write before the next: its acknowledgements come in order.
    expect(Number(i)).toBe(acked[Number(client)]);
    acked[Number(client)]!++;
    return ++total === killAfter + 1;
  });
  return acked;
}

describe.each(GRAPH_DRIVERS)('kill -9 during group-committed writes (graph: %s)', (graph) => {
  it('keeps every acknowledged write once, in order, and no unacknowledged one in part', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: CLIENTS * PER_CLIENT - 2 }), async (killAfter) => {
        const dir = join(await tempDir(), `db-${run++}`);
        const acked = await runAndKill(dir, killAfter, graph);
        const memory = await openMemory({ path: dir, embedder: hashEmbedder, env: {} }); // replays an unfinished group
        try {
          const doc = await memory.exportMemory({ sensitivity: ['public', 'internal', 'secret'] });
          const ids = doc.entries!.map((e) => e.id);
          expect(new Set(ids).size, 'an entry is stored twice').toBe(ids.length);
          expect((await memory.stats()).entries).toBe(ids.length);
          const held = new Set(ids);
          const edges = new Set(doc.relations!.map((r) => `${r.type} ${r.from} ${r.to}`));
          for (let client = 0; client < CLIENTS; client++) {
            const stored = Array.from({ length: PER_CLIENT }, (_, i) => held.has(groupEntry(client, i).id));
            const count = stored.filter(Boolean).length;
            // What the writer was told is there; beyond it at most the write it was waiting for.
            expect(
              count === acked[client] || count === acked[client]! + 1,
              `writer ${client}: ${count} stored, ${acked[client]} acknowledged`,
            ).toBe(true);
            expect(stored.slice(0, count).every(Boolean), `writer ${client}: its writes out of order`).toBe(true);
            for (let i = 0; i < count; i++) {
              const { id, word } = groupEntry(client, i);
              const entry = doc.entries!.find((e) => e.id === id)!;
              expect(entry.content).toBe(word);
              if (i > 0) expect(edges.has(`RELATED ${id} ${groupEntry(client, i - 1).id}`), `${id} without its link`).toBe(true);
              expect((await memory.keywordSearch(word)).map((h) => h.entry.id)).toContain(id);
            }
          }
          // No edge names an entry that is not there.
          for (const r of doc.relations!) expect(held.has(r.from) && held.has(r.to), `edge ${r.from} → ${r.to}`).toBe(true);
        } finally {
          await memory.close();
        }
        expect((await doctorMemory(dir)).findings.filter((f) => !f.ok)).toEqual([]);
      }),
      { seed: Number(process.env.FC_SEED ?? 20261126), numRuns: Number(process.env.FC_RUNS ?? 4), verbose: true, endOnFailure: true },
    );
  }, 300_000);
});
