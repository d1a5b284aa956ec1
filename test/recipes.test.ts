import { describe, expect, it } from 'vitest';
import { OptionError } from '../src/model/options.js';
import { PRESET_NAMES, presetOptions, withOverrides, type GraphRanker, type Reranker, type SearchHit } from '../src/index.js';
import { EXAMPLE_FILE, tempDir, withEngine } from './helpers.js';

const ids = (hits: readonly SearchHit[]) => hits.map((h) => h.entry.id);

describe('recipes', () => {
  it('are frozen copies: the caller can change its options after, and nobody can change the recipe', () => {
    const cores = ['team'];
    const recipe = withOverrides('context', { cores, maxEntries: 5, relationTypes: ['RELATED'] });
    cores.push('other');
    expect(recipe.filter.cores).toEqual(['team']);
    expect(Object.isFrozen(recipe)).toBe(true);
    expect(Object.isFrozen(recipe.filter.cores)).toBe(true);
    expect(Object.isFrozen(recipe.expansion!.edgeTypes)).toBe(true);
    expect(() => ((recipe.budget as { maxEntries: number }).maxEntries = 99)).toThrow(TypeError);
  });

  it('hold the defaults of their preset, and the overrides given', () => {
    const hybrid = withOverrides('hybrid');
    expect(hybrid.fusion).toEqual({ method: 'weighted', weights: [0.3, 1, 2, 3], k: 60 });
    expect(hybrid.sources).toMatchObject({
      keyword: true,
      mentions: false,
      candidates: 100,
      vector: { stage1: 'candidates', threshold: -1 },
    });
    expect(hybrid.expansion).toBeUndefined();
    // Switching the method takes that method's default weights; weights given override by position.
    expect(withOverrides('hybrid', { fusion: 'rrf' }).fusion.weights).toEqual([1, 1, 2, 3]);
    expect(withOverrides('hybrid', { fusionWeights: [0.5, 2] }).fusion.weights).toEqual([0.5, 2, 2, 3]);
    expect(withOverrides('hybrid', { weights: [0.5, 2] } as never).fusion.weights).toEqual([0.5, 2, 2, 3]);
    const context = withOverrides('context', { depth: 0, graphRanking: 'proximity' });
    expect(context.expansion).toMatchObject({ seeds: 4, depth: 0, edgeTypes: ['RELATED', 'DEPENDS_ON'], ranker: { name: 'proximity' } });
    expect(withOverrides('context').expansion!.ranker).toMatchObject({ name: 'pagerank', needsEdges: true });
    expect(context.sources.vector!.threshold).toBe(0.2);
    expect(context.attachCode).toBe(true);
    expect(withOverrides('find').attachCode).toBe(false);
    expect(withOverrides('matryoshka').sources.vector!.stage1).toBe('calibrated');
    expect(withOverrides('matryoshka', { candidates: 300 }).sources.vector!.stage1).toBe('candidates');
    expect(withOverrides('semantic').sources).toMatchObject({ keyword: false, mentions: false, vector: { stage1: 'exact' } });
    expect(withOverrides('keyword').sources.vector).toBeUndefined();
    expect(withOverrides('context', { llmFilter: { maxSelect: 3 } }).reranker).toEqual({
      kind: 'llm',
      options: { maxSelect: 3, overRetrieve: 50, timeoutMs: 8000 },
    });
  });

  it('refuse bad options with { option, got, allowed }, the same words from every preset', () => {
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(OptionError);
        return e as OptionError;
      }
      throw new Error('expected an OptionError');
    };
    const limit = refused(() => withOverrides('semantic', { limit: 0 }));
    expect(limit).toMatchObject({ option: 'semanticSearch.limit', got: 0, allowed: ['an integer from 1 to 10000'] });
    expect(limit.message).toBe('limit must be an integer from 1 to 10000, got 0');
    expect(refused(() => withOverrides('hybrid', { limit: 1.5 })).message).toBe('limit must be an integer from 1 to 10000, got 1.5');
    expect(refused(() => withOverrides('context', { fusion: { method: 'borda' } } as never))).toMatchObject({
      option: 'buildTaskContext.fusion.method',
      got: 'borda',
      allowed: ['rrf', 'weighted'],
    });
    expect(refused(() => withOverrides('keyword', { threshold: 0.3 } as never)).option).toBe('keywordSearch.threshold');
    expect(refused(() => withOverrides('hybrid', { fusionWeights: [1, 1], weights: [1, 2] } as never)).message).toMatch(
      /give fusionWeights \(weights is its former name\), not both/,
    );
    expect(refused(() => withOverrides('hybrid', { fusion: { k: 10 }, k: 20 })).message).toMatch(/give k once/);
    expect(refused(() => withOverrides('matryoshka', { candidates: 5, limit: 10 })).message).toBe(
      'candidates (5) must be at least limit (10)',
    );
    expect(refused(() => withOverrides('hybrid', { mentions: 'yes' } as never)).message).toMatch(/mentions must be true or false/);
    expect(refused(() => withOverrides('bm25' as never)).allowed).toEqual(PRESET_NAMES);
    expect(refused(() => withOverrides('context', { createdAfter: new Date(2000), createdBefore: new Date(1000) })).option).toBe(
      'createdBefore',
    );
  });

  it('list what each preset accepts, former names included', () => {
    expect(presetOptions('semantic')).toEqual(expect.arrayContaining(['limit', 'threshold', 'cores', 'asOf']));
    expect(presetOptions('semantic')).not.toContain('candidates');
    expect(presetOptions('hybrid')).toContain('weights');
    expect(presetOptions('find')).not.toContain('includeCode');
    expect(presetOptions('context')).toContain('includeCode');
  });

  it('run through memory.search as the methods run them', async () => {
    await withEngine(await tempDir(), async (m) => {
      await m.ingest(EXAMPLE_FILE);
      const q = 'rotate refresh tokens';
      expect(ids(await m.search(q, { recipe: 'semantic', overrides: { limit: 3 } }))).toEqual(ids(await m.semanticSearch(q, { limit: 3 })));
      expect(ids(await m.search(q, { recipe: 'keyword' }))).toEqual(ids(await m.keywordSearch(q)));
      expect(ids(await m.search(q, { recipe: 'matryoshka', overrides: { candidates: 50 } }))).toEqual(
        ids((await m.matryoshkaSearch(q, { candidates: 50 })).hits),
      );
      const hybrid = await m.search(q, { overrides: { fusion: 'rrf', mentions: true } });
      expect(ids(hybrid)).toEqual(ids(await m.hybridSearch(q, { fusion: 'rrf', mentions: true })));
      expect(hybrid.notes).toEqual([]);
      const context = await m.search(q, { recipe: 'context', overrides: { maxEntries: 4 } });
      expect(ids(context)).toEqual(ids((await m.buildTaskContext(q, { maxEntries: 4 })).entries));
      expect(context.length).toBeGreaterThan(0);
      expect(ids(await m.search(q, { recipe: 'find', overrides: { graphRanking: 'proximity' } }))).toEqual(
        ids(await m.findWithContext(q, { graphRanking: 'proximity' })),
      );
      await expect(m.search(q, { recipe: 'semantic', overrides: { mentions: true } as never })).rejects.toThrow(
        /search: unknown option "mentions"/,
      );
      await expect(m.search(q, { recpe: 'semantic' } as never)).rejects.toThrow(/unknown option "recpe"/);
    });
  });

  it('share a cached bundle when they are equal, however the options were written', async () => {
    await withEngine(await tempDir(), async (m) => {
      await m.ingest(EXAMPLE_FILE);
      const first = await m.buildTaskContext('jwt refresh');
      expect(first.cacheHit).toBe(false);
      // The defaults written out make the same recipe: the same bundle, from the cache.
      const again = await m.buildTaskContext('jwt refresh', { maxEntries: 12, depth: 2, fusion: { method: 'rrf' } });
      expect(again.cacheHit).toBe(true);
      expect(again.bundleId).toBe(first.bundleId);
      // findWithContext is another recipe (no code): not served from buildTaskContext's bundle.
      expect((await m.buildTaskContext('jwt refresh', { includeCode: false })).cacheHit).toBe(false);
    });
  });

  it("take a Reranker of the caller's: it gets the best by score and chooses; when it fails, the order by score stays", async () => {
    await withEngine(await tempDir(), async (m) => {
      await m.ingest(EXAMPLE_FILE);
      const task = 'rotate refresh tokens';
      const byScore = ids((await m.buildTaskContext(task, { maxEntries: 50, relevanceFloor: false })).entries);
      expect(byScore.length).toBeGreaterThan(2);
      const seen: number[] = [];
      const reverse: Reranker = {
        name: 'reverse',
        offered: 3,
        async rerank(_task, entries) {
          seen.push(entries.length);
          return { kept: [...entries].reverse().slice(0, 2), notes: ['reversed'] };
        },
      };
      const bundle = await m.buildTaskContext(task, { reranker: reverse, relevanceFloor: false });
      expect(seen).toEqual([3]);
      expect(ids(bundle.entries)).toEqual([byScore[2], byScore[1]]);
      expect(bundle.notes).toContain('reversed');
      expect(bundle.timings).toHaveProperty('rerank');

      const failing: Reranker = { name: 'down', offered: 3, rerank: () => Promise.reject(new Error('model server down')) };
      const fallback = await m.buildTaskContext(task, { reranker: failing, maxEntries: 2, relevanceFloor: false });
      expect(ids(fallback.entries)).toEqual(byScore.slice(0, 2));
      expect(fallback.notes).toContain('reranker down failed (model server down); kept the order by score');
      const foreign: Reranker = {
        name: 'foreign',
        offered: 1,
        rerank: async (_t, entries) => ({ kept: [{ ...entries[0]!, entry: { ...entries[0]!.entry, id: 'made-up' } }], notes: [] }),
      };
      expect((await m.buildTaskContext(task, { reranker: foreign, relevanceFloor: false })).notes.join()).toMatch(
        /reranker foreign failed \(it returned entries it was not offered\)/,
      );

      await expect(m.buildTaskContext(task, { reranker: { name: 'x', offered: 0, rerank: reverse.rerank } })).rejects.toThrow(
        /reranker must be a Reranker/,
      );
      await expect(m.buildTaskContext(task, { reranker: reverse, llmFilter: true })).rejects.toThrow(
        /give reranker or llmFilter, not both/,
      );
      // The recipe keeps the reranker itself, not a copy of it.
      expect((withOverrides('context', { reranker: reverse }).reranker as { reranker: Reranker }).reranker).toBe(reverse);
    });
  });

  it("take a GraphRanker of the caller's, given the candidates, the seeds and, when it asks, the edges among them", async () => {
    await withEngine(await tempDir(), async (m) => {
      await m.ingest(EXAMPLE_FILE);
      const task = 'rotate refresh tokens';
      const byScore = ids((await m.buildTaskContext(task, { maxEntries: 50, relevanceFloor: false, evidenceCut: false })).entries);
      const last = byScore[byScore.length - 1]!;
      let seen: { candidates: number; seeds: number; edges: number } | undefined;
      const favourite: GraphRanker = {
        name: `favourite:${last}`,
        needsEdges: true,
        score(input) {
          seen = { candidates: input.candidates.length, seeds: input.seeds.size, edges: input.edges.length };
          return new Map([[last, 1]]);
        },
      };
      const bundle = await m.buildTaskContext(task, {
        graphRanking: favourite,
        scoringWeights: { graph: 10 },
        maxEntries: 50,
        relevanceFloor: false,
        evidenceCut: false,
      });
      expect(ids(bundle.entries)[0]).toBe(last);
      expect(seen!.candidates).toBe(byScore.length);
      expect(seen!.seeds).toBeGreaterThan(0);
      expect(seen!.edges).toBeGreaterThan(0);
      await expect(m.buildTaskContext(task, { graphRanking: { name: 'x' } as never })).rejects.toThrow(
        /graphRanking must be pagerank, proximity or a GraphRanker/,
      );
    });
  });
});
