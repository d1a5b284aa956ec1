import { describe, expect, it } from 'vitest';
import { openMemory } from '../src/index.js';
import { HUB_DEGREE } from '../src/retrieve/expandThroughGraph.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

/**
 * One entry that everything links to (the project's conventions) must not put the whole store two
 * hops from every seed: the hub is reached, not walked through. Explicit traversal still walks it.
 */
describe('a hub entry', () => {
  it('is reached by the expansion but not walked through; traverse still walks it', async () => {
    const spokes = HUB_DEGREE + 100;
    const m = await openMemory({ path: await tempDir(), embedder: wordHashEmbedder(1024), env: {} });
    try {
      await m.ingestDocument({
        entries: [
          {
            id: 'alpha',
            core_id: 'c',
            title: 'Alpha deploy checklist',
            content: 'Run the alpha deploy checklist before every release.',
            entry_type: 'convention',
          },
          { id: 'beta', core_id: 'c', title: 'Rollback notes', content: 'How a release is rolled back.', entry_type: 'lesson' },
          { id: 'hub', core_id: 'c', title: 'Project conventions', content: 'House rules every change follows.', entry_type: 'convention' },
          ...Array.from({ length: spokes }, (_, i) => ({
            id: `spoke-${i}`,
            core_id: 'c',
            title: `Spoke ${i} zq${i}`,
            content: `Unrelated note zz${i}.`,
            entry_type: 'lesson',
          })),
        ],
        relations: [
          { type: 'RELATED', from: 'alpha', to: 'beta' },
          { type: 'RELATED', from: 'alpha', to: 'hub' },
          ...Array.from({ length: spokes }, (_, i) => ({ type: 'RELATED' as const, from: `spoke-${i}`, to: 'hub' })),
        ],
      });
      // What the walk reaches, not where the evidence cut would end the bundle.
      const bundle = await m.buildTaskContext('alpha deploy checklist', { maxEntries: 60, threshold: 0.2, evidenceCut: false });
      const graphReached = (id: string) => bundle.entries.find((e) => e.entry.id === id)?.why.some((r) => r.kind === 'graph') ?? false;
      expect(graphReached('beta')).toBe(true);
      expect(graphReached('hub')).toBe(true);
      // No spoke is there by way of the hub (a few may be there by a word's hash colliding with the task's).
      expect(bundle.entries.filter((e) => e.entry.id.startsWith('spoke-') && graphReached(e.entry.id)).map((e) => e.entry.id)).toEqual([]);
      // Asked for outright, the walk goes through the hub to every spoke.
      const walked = await m.traverse('alpha', { depth: 2 });
      expect(walked.filter((h) => h.entry.id.startsWith('spoke-')).length).toBe(spokes);
    } finally {
      await m.close();
    }
  });
});

describe('EntryAdjacency around a hub', () => {
  it('finds the same edges among candidates and the same successors as a walk of every edge', async () => {
    const { EntryAdjacency } = await import('../src/store/graph/entryAdjacency.js');
    const ids = Array.from({ length: 3000 }, (_, i) => `e${i}`);
    const edges = [
      ...ids.slice(1).map((id) => ({ from: id, to: 'e0', type: 'RELATED' as const, weight: 0.5 })),
      ...ids.slice(1, 40).map((id, i) => ({ from: 'e0', to: ids[i + 100]!, type: 'DEPENDS_ON' as const, weight: 1 })),
      ...ids.slice(5, 60).map((id, i) => ({ from: ids[i + 200]!, to: id, type: 'SUPERSEDES' as const, weight: 1 })),
      { from: 'e7', to: 'e0', type: 'SUPERSEDES' as const, weight: 1 },
    ];
    const adjacency = new EntryAdjacency(ids, edges);
    const among = ['e0', ...ids.slice(1, 300).filter((_, i) => i % 3 === 0)];
    const wanted = new Set(among);
    const key = (e: { from: string; to: string; type: string }) => `${e.type} ${e.from} ${e.to}`;
    const expected = edges
      .filter((e) => wanted.has(e.from) && wanted.has(e.to) && e.type !== 'SUPERSEDES')
      .map(key)
      .sort();
    expect(adjacency.edgesAmong(among, ['RELATED', 'DEPENDS_ON']).map(key).sort()).toEqual(expected);
    const successors = (live: typeof edges) =>
      new Map(
        ids.flatMap((id) => {
          const newer = live
            .filter((e) => e.type === 'SUPERSEDES' && e.to === id)
            .map((e) => e.from)
            .sort()[0];
          return newer ? [[id, newer] as const] : [];
        }),
      );
    expect(adjacency.supersededBy(ids)).toEqual(successors(edges));
    // Removing entries forgets their supersessions, at either end.
    adjacency.removeEntries(['e205', 'e8', 'e0']);
    const gone = new Set(['e205', 'e8', 'e0']);
    const live = edges.filter((e) => !gone.has(e.from) && !gone.has(e.to));
    expect(adjacency.supersededBy(ids.filter((id) => !gone.has(id)))).toEqual(successors(live));
    const still = among.filter((id) => !gone.has(id));
    expect(adjacency.edgesAmong(still, ['RELATED', 'DEPENDS_ON', 'SUPERSEDES']).map(key).sort()).toEqual(
      live
        .filter((e) => still.includes(e.from) && still.includes(e.to))
        .map(key)
        .sort(),
    );
    expect(adjacency.degree('e1')).toBe(0);
  });
});
