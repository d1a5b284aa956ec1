import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { allGoldAt, aggregate, ndcgAt, recallAt, reciprocalRank } from '../src/eval/metrics.js';
import { formatReport, runEval } from '../src/eval/runEval.js';
import { loadEvalFile } from '../src/eval/evalFile.js';
import { ADAPTERS, normaliseEvidence, parseLocomoDate, parsePythonList } from '../src/eval/adapters/index.js';
import { main } from '../src/cli/main.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

const TINY = fileURLToPath(new URL('./fixtures/tiny-eval.yaml', import.meta.url));

describe('metrics', () => {
  const gold = new Set(['a', 'b']);
  it('computes recall, all-gold, nDCG and reciprocal rank', () => {
    const ranked = ['x', 'a', 'y', 'b'];
    expect(recallAt(ranked, gold, 2)).toBe(0.5);
    expect(recallAt(ranked, gold, 4)).toBe(1);
    expect(allGoldAt(ranked, gold, 3)).toBe(0);
    expect(allGoldAt(ranked, gold, 4)).toBe(1);
    expect(ndcgAt(ranked, gold, 10)).toBeCloseTo((1 / Math.log2(3) + 1 / Math.log2(5)) / (1 + 1 / Math.log2(3)), 10);
    expect(reciprocalRank(ranked, gold)).toBe(0.5);
    expect(reciprocalRank(['x'], gold)).toBe(0);
    expect(recallAt([], new Set(), 5)).toBe(1); // no evidence counts as found
  });
  it('averages over queries', () => {
    const row = aggregate(
      [
        { ranked: ['a', 'b'], gold: ['a'] },
        { ranked: ['x'], gold: ['b'] },
      ],
      [1],
    );
    expect(row).toMatchObject({ queries: 2, recall: { 1: 0.5 }, allGold: { 1: 0.5 }, mrr: 0.5 });
  });
});

describe('runEval', () => {
  it('ingests the eval file, runs every strategy and reports per category', async () => {
    const file = await loadEvalFile(TINY);
    const report = await runEval(file, { ks: [1, 3], autoLink: true, engine: { embedder: wordHashEmbedder(256), env: {} } });
    expect(report).toMatchObject({ name: 'tiny', entries: 6, queries: 3, ks: [1, 3] });
    expect(report.relations).toBe(1); // the alert entry mentions the "Dead letter queue" title
    const keyword = report.strategies.keyword!;
    expect(keyword.overall.recall[1]).toBeCloseTo((1 + 0.5 + 1) / 3, 5); // q2: one of its two gold ids at rank 1
    expect(Object.keys(keyword.byCategory)).toEqual(['multi-hop', 'single-hop']);
    // the graph strategies reach the mentioned entry from the seed
    expect(report.strategies['graph-ppr']!.byCategory['multi-hop']!.allGold[3]).toBe(1);
    expect(Object.keys(report.strategies)).toEqual(['vector', 'matryoshka', 'keyword', 'hybrid', 'graph', 'graph-ppr', 'context']);
    const text = formatReport(report, ['reference line']);
    expect(text).toMatch(/^tiny: 6 entries, 1 relations, 3 queries/);
    expect(text).toMatch(/strategy\s+R@1\s+R@3\s+AG@1\s+AG@3\s+nDCG@10\s+MRR\s+ms\/q/);
    expect(text).toMatch(/Published reference numbers[\s\S]*reference line$/);
  });

  it('rejects bad eval files and options', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ entries: [], queries: [{ id: 'q', text: 'x' }] }));
    await expect(loadEvalFile(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json: queries\[0\]: field "gold": is required/);
    await writeFile(
      join(dir, 'dup.json'),
      JSON.stringify({
        queries: [
          { id: 'q', text: 'x', gold: [] },
          { id: 'q', text: 'y', gold: [] },
        ],
      }),
    );
    await expect(loadEvalFile(join(dir, 'dup.json'))).rejects.toThrow(/duplicate query id "q"/);
    await expect(runEval({ queries: [{ id: 'q', text: 'x', gold: [] }] }, { strategies: ['magic' as never] })).rejects.toThrow(
      /unknown strategy "magic"/,
    );
  });

  it('memcore eval runs a file from the command line with --json and --out', async () => {
    const dir = await tempDir();
    const out: string[] = [];
    const code = await main(['eval', TINY, '--strategies', 'keyword,hybrid', '--k', '1,3', '--json', '--out', join(dir, 'r.json')], {
      out: (t) => out.push(t),
      err: () => undefined,
      isTTY: false,
    });
    expect(code).toBe(0);
    const report = JSON.parse(out.join('')) as { strategies: Record<string, unknown> };
    expect(Object.keys(report.strategies)).toEqual(['keyword', 'hybrid']);
    expect(await main(['eval', TINY, '--strategies', 'nope'], { out: () => undefined, err: () => undefined, isTTY: false })).toBe(2);
  });

  it('answers diff queries with contextForDiff, on a memory file the eval file names', async () => {
    const file = await loadEvalFile(fileURLToPath(new URL('../examples/eval/orders-api-diffs.yaml', import.meta.url)));
    expect(file.queries.every((q) => q.diff === true)).toBe(true);
    expect((file.entries as unknown[]).length).toBe(44); // from examples/memory/orders-api.yaml
    const report = await runEval(file, { strategies: ['keyword', 'context'], ks: [5], engine: { embedder: wordHashEmbedder(), env: {} } });
    // every entry on the changed code, and what it depends on, is in the first five
    expect(report.strategies.context!.overall.recall[5]).toBe(1);
    expect(report.strategies.context!.overall.recall[5]).toBeGreaterThan(report.strategies.keyword!.overall.recall[5]!);

    const dir = await tempDir();
    const both = join(dir, 'both.yaml');
    await writeFile(both, 'memory: ../x.yaml\nentries: [{ id: a, title: A, content: a }]\nqueries: [{ id: q, text: a, gold: [a] }]\n');
    await expect(loadEvalFile(both)).rejects.toThrow(/names a memory file, so the eval file holds no memory of its own \(found entries\)/);
    const missing = join(dir, 'missing.yaml');
    await writeFile(missing, 'memory: nowhere.yaml\nqueries: [{ id: q, text: a, gold: [a] }]\n');
    await expect(loadEvalFile(missing)).rejects.toThrow(/nowhere\.yaml cannot be read \(ENOENT\)/);
  });

  it("simulates feedback: rates half the queries' bundles, scores the other half with and without", async () => {
    const file = await loadEvalFile(fileURLToPath(new URL('../examples/eval/orders-api-diffs.yaml', import.meta.url)));
    const plain = { ...file, queries: file.queries.map(({ diff: _diff, ...q }) => q) };
    const report = await runEval(plain, {
      strategies: ['context'],
      ks: [1, 3],
      simulateFeedback: true,
      engine: { embedder: wordHashEmbedder(), env: {} },
    });
    const f = report.feedback!;
    expect([f.rated, f.scored]).toEqual([6, 6]); // one core: alternate queries
    expect(f.ratings).toBe(60); // ten entries a rated bundle
    // rating the first half leaves the second half's ranking without ratings as it was
    const other = { ...plain, queries: plain.queries.filter((_, i) => i % 2 === 1) };
    const baseline = await runEval(other, { strategies: ['context'], ks: [1, 3], engine: { embedder: wordHashEmbedder(), env: {} } });
    expect(f.without).toEqual(baseline.strategies.context!.overall);
    expect(formatReport(report)).toMatch(/simulated feedback: the context bundles of 6 queries rated \(60 ratings/);
  });

  it('lists the queries a strategy misses at a cut-off, with where each gold id ranked', async () => {
    const file = await loadEvalFile(TINY);
    const report = await runEval(file, {
      strategies: ['keyword'],
      ks: [1, 3],
      misses: 1,
      engine: { embedder: wordHashEmbedder(256), env: {} },
    });
    expect(report.misses).toEqual({ k: 1, depth: 10 });
    // q2 has two gold ids and only one can be first; q1 and q3 are found at rank 1
    const [miss, ...rest] = report.strategies.keyword!.misses!;
    expect(rest).toEqual([]);
    expect(miss!.id).toBe('q2');
    expect(miss!.gold.map((g) => g.id)).toEqual(['alert', 'dlq']);
    expect(miss!.gold.map((g) => g.rank).filter((r) => r === 1)).toHaveLength(1);
    expect(formatReport(report)).toMatch(
      /keyword: 1 of 3 queries miss a gold id in the top 1 \(gold ranks; – = not in the top 10\):\n {2}q2 {2}who gets paged when failing messages pile up\n {6}alert (1|–|\d+) \| dlq (1|–|\d+)/,
    );
    // without the option nothing is listed
    expect(
      (await runEval(file, { strategies: ['keyword'], ks: [1], engine: { embedder: wordHashEmbedder(256), env: {} } })).strategies.keyword!
        .misses,
    ).toBeUndefined();
    await expect(runEval(file, { strategies: ['keyword'], misses: 0 })).rejects.toThrow(/misses must be a whole number from 1 to 1000/);
    const io = { out: () => undefined, err: () => undefined, isTTY: false };
    expect(await main(['eval', TINY, '--strategies', 'keyword', '--misses', '0'], io)).toBe(2);
    expect(await main(['eval', TINY, '--strategies', 'keyword', '--misses', 'many'], io)).toBe(2);
  });
});

describe('adapters', () => {
  it('parse the upstream quirks', () => {
    expect(parsePythonList(`[['Alû', 3], ["O'Brien", 0]]`)).toEqual([
      ['Alû', 3],
      ["O'Brien", 0],
    ]);
    expect(normaliseEvidence(['D8:6; D9:17', 'D1:3', 'D1:3'])).toEqual(['D8:6', 'D9:17', 'D1:3']);
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).toBe('2023-05-08T13:56:00.000Z');
    expect(parseLocomoDate('sometime')).toBeUndefined();
  });

  it('build eval files from folders of each layout', async () => {
    const root = await tempDir();
    const dir = async (name: string, files: Record<string, string>) => {
      await mkdir(join(root, name, 'qrels'), { recursive: true });
      for (const [f, text] of Object.entries(files)) await writeFile(join(root, name, f), text);
      return join(root, name);
    };
    const wiki = await ADAPTERS['2wiki']!.build({
      data: await dir('w', {
        'corpus.json': JSON.stringify([
          { title: 'A', text: 'a' },
          { title: 'A', text: 'again' },
          { title: 'B', text: 'b' },
          { title: 'William Duncan (actor)', text: 'd' },
        ]),
        'questions_dev.json': JSON.stringify([{ question: 'q?', gold_titles: ['A', 'B'] }]),
      }),
    });
    expect((wiki.entries as { id: string }[]).map((e) => e.id)).toEqual(['A', 'A (2)', 'B', 'William Duncan (actor)']);
    expect((wiki.entries as { aliases?: string[] }[]).map((e) => e.aliases)).toEqual([undefined, undefined, undefined, ['William Duncan']]);
    expect(wiki.queries).toEqual([{ id: 'questions_dev.json#0', text: 'q?', gold: ['A', 'B'] }]);

    const hotpot = await ADAPTERS.hotpotqa!.build({
      data: await dir('h', {
        'x_corpus.json': JSON.stringify({ Alû: ['First.', ' Second.'], Lilu: ['L.'] }),
        'x.json': JSON.stringify([
          { _id: 'h1', question: 'q?', supporting_facts: "[['Alû', 1], ['Lilu', 0], ['Alû', 0]]", type: 'bridge' },
        ]),
      }),
    });
    expect((hotpot.entries as { content: string }[])[0]!.content).toBe('First. Second.');
    expect(hotpot.queries).toEqual([{ id: 'h1', text: 'q?', gold: ['Alû', 'Lilu'], category: 'bridge' }]);

    const conversation = {
      speaker_a: 'A',
      speaker_b: 'B',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        { speaker: 'A', dia_id: 'D1:1', text: 'hi' },
        { speaker: 'B', dia_id: 'D1:2', text: 'look', blip_caption: 'a dog' },
      ],
    };
    const loco = await ADAPTERS.locomo!.build({
      data: await dir('l', {
        'dev.json': JSON.stringify([
          { sample_id: 'conv-1', conversation, qa: [{ question: 'what?', evidence: ['D1:2; D1:1', 'D9:9'], category: 4 }] },
        ]),
        'other.json': JSON.stringify({ not: 'a list' }),
      }),
    });
    expect(loco.entries).toEqual([
      expect.objectContaining({ id: 'conv-1/D1:1', core_id: 'conv-1', content: 'A: hi', created_at: '2023-05-08T13:56:00.000Z' }),
      expect.objectContaining({ id: 'conv-1/D1:2', content: 'B: look [shares a photo: a dog]' }),
    ]);
    expect(loco.relations).toEqual([{ type: 'RELATED', from: 'conv-1/D1:1', to: 'conv-1/D1:2', weight: 1, kind: 'next-turn' }]);
    expect(loco.queries).toEqual([{ id: 'conv-1#0', text: 'what?', cores: ['conv-1'], gold: ['conv-1/D1:2', 'conv-1/D1:1'], category: 4 }]);

    const sci = await ADAPTERS.scifact!.build({
      data: await dir('s', {
        'corpus.jsonl': [
          { _id: '1', title: 'T1', text: 'x' },
          { _id: '2', title: 'T2', text: 'y' },
        ]
          .map((d) => JSON.stringify(d))
          .join('\n'),
        'queries.jsonl': [
          { _id: 'q1', text: 'claim one' },
          { _id: 'q2', text: 'claim two' },
        ]
          .map((d) => JSON.stringify(d))
          .join('\n'),
        'qrels/dev.tsv': 'query-id\tcorpus-id\tscore\nq1\t2\t1\nq2\t1\t0\n',
      }),
      split: 'dev',
    });
    expect(sci.queries).toEqual([{ id: 'q1', text: 'claim one', gold: ['2'] }]);
    await expect(ADAPTERS['2wiki']!.build({ data: join(root, 'missing') })).rejects.toThrow(/no 2wiki data at/);
  });
});
