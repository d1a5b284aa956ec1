import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KuzuGraphStore } from '../src/store/graph/kuzuGraphStore.js';
import { tempDir } from './helpers.js';

describe('Kuzu graph store', () => {
  it('edgesAmong returns exactly the edges between the given entries, with type and weight', async () => {
    const g = await KuzuGraphStore.open(join(await tempDir(), 'graph.kuzu'));
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
      expect(await g.edgesAmong(['a', "it's \\ ünï"], ['SUPERSEDES'])).toEqual([{ from: 'a', to: "it's \\ ünï", type: 'SUPERSEDES', weight: 1 }]);
    } finally {
      await g.close();
    }
  });
});
