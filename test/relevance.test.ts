import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_RELEVANT_MEMORY, WEAK_MATCHES } from '../src/format/formatContext.js';
import { formatContext, openMemory } from '../src/index.js';
import { KeywordIndex } from '../src/store/resident/keywordIndex.js';
import { CHANCE_MATCHES, judgeRelevance, matchChance, relevanceFloor } from '../src/retrieve/relevance.js';
import { mulberry32 } from '../src/embed/matryoshka.js';
import { keywordQuery } from '../src/retrieve/keywordCandidates.js';
import type { Hit } from '../src/retrieve/candidate.js';
import { EXAMPLE_FILE, tempDir, wordHashEmbedder } from './helpers.js';

describe('no relevant memory is an answer', () => {
  it('marks a task the store knows nothing about low-confidence, and its prompt block says so', async () => {
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      const cake = await m.buildTaskContext('Bake a chocolate cake with whipped cream');
      expect(cake.entries.length).toBeGreaterThan(0); // the closest entries are still there for a program
      expect(cake.lowConfidence).toBe(true);
      expect(cake.matchStrength).toBe('none');
      expect(cake.notes.some((n) => /^low confidence, nothing relevant: no entry is named by the task, none of its words /.test(n))).toBe(
        true,
      );
      expect(formatContext(cake)).toBe(`<memory>\n${NO_RELEVANT_MEMORY}\n</memory>`);
      expect(formatContext(cake, { style: 'markdown' })).toContain('**Low confidence.**');

      // on-topic: words of the memory's own, and a named entry
      expect((await m.buildTaskContext('add a NOT NULL column to orders without downtime')).lowConfidence).toBeUndefined();
      expect((await m.buildTaskContext('what does Rotate refresh tokens on every use say about reuse')).lowConfidence).toBeUndefined();
      // overridable: off, or a floor no keyword match reaches
      expect(
        (await m.buildTaskContext('Bake a chocolate cake with whipped cream', { relevanceFloor: false })).lowConfidence,
      ).toBeUndefined();
      expect((await m.buildTaskContext('add a NOT NULL column to orders without downtime', { relevanceFloor: 1 })).lowConfidence).toBe(
        true,
      );
      await expect(m.buildTaskContext('x', { relevanceFloor: 2 })).rejects.toThrow(/relevanceFloor must be a number from 0 to 1, or false/);
    } finally {
      await m.close();
    }
  });

  it('does not hide on-topic tasks written as people write them; keeps "nothing relevant" for off-topic ones', async () => {
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      // Each of these was hidden ("No project memory is relevant") by the chance floor alone.
      for (const [task, expected] of [
        ['change the error response format for validation errors', ['Request validation failures return 422', 'problem+json']],
        ['Add a refresh-token endpoint (http 10)', ['Rotate refresh tokens on every use', 'Refresh-token families']],
        ['JIRA-4411: please change the error response format for validation errors, thanks!', ['Request validation', 'problem+json']],
        ['sprint 14 goal: logout everywhere button in the account settings page', ['Logout revokes the family']],
      ] as const) {
        const bundle = await m.buildTaskContext(task);
        expect(bundle.matchStrength, task).not.toBe('none');
        const block = formatContext(bundle);
        expect(block, task).not.toContain(NO_RELEVANT_MEMORY);
        expect(
          expected.some((title) => block.includes(title)),
          `${task}\n${block}`,
        ).toBe(true);
        // a weak match keeps only the few best, and says they are weak
        if (bundle.matchStrength === 'weak') {
          expect(block).toContain(WEAK_MATCHES);
          expect(bundle.entries.length).toBeLessThanOrEqual(3);
        }
      }
      for (const task of ['Bake a chocolate cake with whipped cream', 'How do I tune a guitar to drop D', 'Knit a scarf for a beginner']) {
        const bundle = await m.buildTaskContext(task);
        expect(bundle.entries.length === 0 || bundle.matchStrength === 'none', task).toBe(true);
        if (bundle.entries.length > 0) expect(formatContext(bundle)).toBe(`<memory>\n${NO_RELEVANT_MEMORY}\n</memory>`);
      }
    } finally {
      await m.close();
    }
  });

  it('keeps the cut bundle of a weak match asked of a core: a conversation question naming a speaker', async () => {
    // One conversation, one core (as LoCoMo's eval stores it): every turn holds its speaker's name,
    // and Melanie talks about camping in 14 turns. "What did Melanie take camping?" shares the
    // name (held by half the turns) and "camping" with them: a match chance gives a store of 314
    // turns, so a weak one; the answer is one of the camping turns, which score alike. Asked of
    // the conversation's core, the bundle is cut where the evidence ends; asked of the whole
    // memory, whether it bears on the question at all is in doubt, and the few best are kept.
    const everyday = 'work kids dog weekend dinner friends movie book coffee garden music school park lunch weather morning'.split(' ');
    const camping = [
      'camping gear is expensive',
      'the camping site was full',
      'camping in the mountains was cold',
      'we went camping by the lake',
      'camping food tastes better',
      'camping with the dog is fun',
      'the kids want to go camping again',
      'we roasted marshmallows while camping',
      'rain ruined our camping weekend',
      'my sister loves camping too',
      'camping under the stars with my husband',
      'my first camping trip as a child',
      'we bought a new camping stove',
      'I packed the tent and the lantern for camping',
    ];
    const turns = Array.from({ length: 300 }, (_, i) => ({
      speaker: i % 2 === 0 ? 'Melanie' : 'Caroline',
      text: `I was thinking about ${Array.from({ length: 6 }, (_, j) => everyday[(i * 5 + j * 3 + (i >> 4)) % everyday.length]).join(' and ')}`,
    }));
    camping.forEach((text, k) => turns.splice(5 + k * 21, 0, { speaker: 'Melanie', text }));
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingestDocument(
        {
          entries: turns.map((t, i) => ({
            id: `conv/D${i}`,
            core_id: 'conv',
            title: `${t.speaker}, session ${Math.floor(i / 30) + 1}`,
            content: `${t.speaker}: ${t.text}`,
            entry_type: 'fact',
          })),
        },
        { source: 'conversation', autoLink: false },
      );
      const question = 'What did Melanie take camping?';
      const bundle = await m.buildTaskContext(question, { cores: ['conv'] });
      expect(bundle.matchStrength).toBe('weak');
      expect(formatContext(bundle)).toContain(WEAK_MATCHES);
      // the bundle ends where the evidence does, as it would without the judgement: the camping turns,
      // close in score, not the 3 best of them (which of them answers is not for the words to say)
      const unjudged = await m.buildTaskContext(question, { cores: ['conv'], relevanceFloor: false });
      expect(unjudged.matchStrength).toBeUndefined();
      expect(bundle.entries.map((e) => e.entry.id)).toEqual(unjudged.entries.map((e) => e.entry.id));
      expect(bundle.entries.length).toBeGreaterThan(3);
      expect(bundle.entries.every((e) => e.entry.content.includes('camping'))).toBe(true);
      expect(bundle.entries.map((e) => e.entry.content)).toContain('Melanie: I packed the tent and the lantern for camping');
      const unscoped = await m.buildTaskContext(question);
      expect(unscoped.matchStrength).toBe('weak');
      expect(unscoped.entries.map((e) => e.entry.id)).toEqual(bundle.entries.slice(0, 3).map((e) => e.entry.id));
      // off-topic questions asked of the conversation are still "nothing relevant"
      for (const task of ['How do I tune a guitar to drop D', 'Plan a three day trip to Lisbon on a budget']) {
        const off = await m.buildTaskContext(task, { cores: ['conv'] });
        expect(off.entries.length === 0 || off.matchStrength === 'none', task).toBe(true);
        if (off.entries.length > 0) expect(formatContext(off)).toBe(`<memory>\n${NO_RELEVANT_MEMORY}\n</memory>`);
      }
    } finally {
      await m.close();
    }
  });

  it('judges off-topic only on strong evidence, at every store size', () => {
    // A store of made-up project words: each document a few topic words and common ones.
    const topics = ['ledger', 'invoice', 'refund', 'webhook', 'tenant', 'quota', 'shard', 'replica', 'cursor', 'schema'];
    const common = ['service', 'request', 'change', 'use', 'add', 'data', 'time', 'error', 'user', 'update'];
    const hitsFor = (index: KeywordIndex, task: string): Hit[] =>
      index.search(keywordQuery(task), { limit: 20 }).map((h, rank) => ({
        id: h.id,
        similarity: 0.5,
        why: [{ kind: 'keyword', rank, score: 1, bm25: h.score }],
      }));
    for (const size of [10, 100, 1_000, 10_000]) {
      const docs = Array.from({ length: size }, (_, i) => ({
        id: `d${i}`,
        text: [
          `${topics[i % topics.length]}${Math.floor(i / topics.length) % 50}`,
          topics[i % topics.length]!,
          topics[(i * 3 + 1) % topics.length]!,
          ...Array.from({ length: 6 }, (_, j) => common[(i + j * 7) % common.length]!),
        ].join(' '),
        group: 'g',
      }));
      const index = new KeywordIndex(docs);
      const judge = (task: string) => judgeRelevance(index, keywordQuery(task), hitsFor(index, keywordQuery(task)), {}).strength;
      // on-topic, with a typo, noise words and numbers: never "nothing relevant"
      expect(judge('refund a ledger entry'), `${size}`).not.toBe('none');
      expect(judge('urgent!! ticket 4411: the webhok for tenant quota fails since 02:00, please fix asap'), `${size}`).not.toBe('none');
      expect(judge('sprint 14: add a replica for the shard'), `${size}`).not.toBe('none');
      // off-topic: words the store does not hold, or only its common ones
      expect(judge('Bake a chocolate cake with whipped cream'), `${size}`).toBe('none');
      expect(judge('How do I tune a guitar to drop D'), `${size}`).toBe('none');
      expect(judge('Plan a three day trip to Lisbon on a budget'), `${size}`).toBe('none');
    }
  });

  it('asks more of two words meeting in one entry the larger the store: chance there gives everyday tasks such matches', () => {
    // Everyday words spread over a store the way a large general store holds them: each document 8
    // of 400 words, the first ones far more often (as text uses words), so two everyday words of a
    // task meet in some document; and one document of the store's own, rare words.
    const everyday = Array.from({ length: 400 }, (_, i) => `word${i}x`);
    const store = (size: number, seed: number) => {
      const random = mulberry32(seed);
      const docs = Array.from({ length: size - 1 }, (_, i) => ({
        id: `d${i}`,
        text: Array.from({ length: 8 }, () => everyday[Math.floor(everyday.length * random() ** 2)]!).join(' '),
        group: 'g',
      }));
      return new KeywordIndex([...docs, { id: 'ledger', text: 'the refund ledger reconciles chargebacks nightly', group: 'g' }]);
    };
    const hits = (index: KeywordIndex, task: string, vectorRank?: number): Hit[] =>
      index.search(keywordQuery(task), { limit: 20 }).map((h, rank) => ({
        id: h.id,
        similarity: 0.5,
        why: [
          { kind: 'keyword', rank, score: 1, bm25: h.score },
          ...(vectorRank !== undefined && rank === 0 ? [{ kind: 'vector' as const, rank: vectorRank, similarity: 0.5 }] : []),
        ],
      }));
    const large = store(5_000, 7);
    // two everyday words that some document holds together: judged "strong" by shares alone
    const [a, b] = [everyday[40]!, everyday[41]!];
    const everydayTask = `${a} and ${b} for the weekend`;
    const off = judgeRelevance(large, keywordQuery(everydayTask), hits(large, everydayTask), {});
    expect(off.share).toBeGreaterThan(off.floor);
    expect(off.chance * large.size).toBeGreaterThan(CHANCE_MATCHES);
    expect(off.strength).toBe('weak'); // marked, not hidden: the store does hold the words together
    // the store's own rare words stay a strong match at any size, with or without a vector rank
    for (const index of [large, store(40, 7)]) {
      expect(
        judgeRelevance(index, keywordQuery('reconcile the refund ledger'), hits(index, 'reconcile the refund ledger'), {}).strength,
      ).toBe('strong');
    }
    // In a small store, two of its words that meet in the entry the vectors rank first are a strong
    // match; without that agreement, or in a store a hundred times larger, the same shares are not.
    const dfs = [3, 4];
    expect(matchChance(dfs, 44, [1, 1], 1) * 44).toBeLessThan(CHANCE_MATCHES);
    expect(matchChance(dfs, 44, [1, 1], undefined) * 44).toBeGreaterThan(matchChance(dfs, 44, [1, 1], 1) * 44);
    // the same shares of a store a hundred times larger: a hundred times the chance, counted a hundred times more often
    expect(matchChance([300, 400], 4_400, [1, 1], 1) * 4_400).toBeCloseTo(matchChance(dfs, 44, [1, 1], 1) * 44 * 100, 6);
    // long entries make words meet more often: the dispersion multiplies the chance
    expect(matchChance(dfs, 44, [1, 2.5], undefined)).toBeCloseTo(2.5 * matchChance(dfs, 44, [1, 1], undefined), 9);
  });

  it('measures how unevenly long the entries are, for the chance that words meet in one', () => {
    const even = new KeywordIndex(
      Array.from({ length: 20 }, (_, i) => ({ id: `e${i}`, text: `alpha${i} beta${i} gamma${i} delta${i}`, group: 'g' })),
    );
    expect(even.lengthDispersion(3).map((x) => Number(x.toFixed(9)))).toEqual([1, 1, 1]);
    const uneven = new KeywordIndex([
      ...Array.from({ length: 10 }, (_, i) => ({ id: `s${i}`, text: `alpha${i} beta${i}`, group: 'g' })),
      ...Array.from({ length: 10 }, (_, i) => ({ id: `l${i}`, text: `one${i} two${i} three${i} four${i} five${i} six${i}`, group: 'g' })),
    ]);
    // lengths 2 and 6: mean 4, mean square 20, mean cube 112
    expect(uneven.lengthDispersion(3).map((x) => Number(x.toFixed(9)))).toEqual([1, 20 / 16, 112 / 64]);
    uneven.remove(['l0', 'l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7', 'l8', 'l9']);
    expect(uneven.lengthDispersion(2).map((x) => Number(x.toFixed(9)))).toEqual([1, 1]); // removed documents do not count
  });

  it('writes the lines of the tasks it could not answer in the order asked, all of them by close', async () => {
    const dir = join(await tempDir(), 'db');
    const tasks = ['Bake a chocolate cake', 'Which wine goes with grilled fish', 'tune a guitar to drop D', 'knit a scarf'];
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      // asked at once: the lines are queued behind one another, none lost
      await Promise.all(tasks.map((t) => m.buildTaskContext(t)));
    } finally {
      await m.close();
    }
    const lines = (await readFile(join(dir, 'gaps.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { task: string }).task).sort()).toEqual([...tasks].sort());
  });

  it('logs the tasks memory could not answer, groups similar ones, and keeps them for the retention', async () => {
    const dir = join(await tempDir(), 'db');
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      await m.buildTaskContext('Bake a chocolate cake');
      await m.buildTaskContext('bake a chocolate cake!', { cores: ['auth-jwt'] });
      await m.buildTaskContext('Bake a chocolate cake'); // a cache hit is asked again, and counts
      await m.buildTaskContext('Which wine goes with grilled fish');
      await m.buildTaskContext('add a NOT NULL column to orders without downtime'); // answered: not a gap
      const groups = await m.gaps();
      expect(groups.map((g) => [g.task, g.count])).toEqual([
        ['Bake a chocolate cake', 3],
        ['Which wine goes with grilled fish', 1],
      ]);
      expect(groups[0]!.tasks.map((t) => t.cores)).toContainEqual(['auth-jwt']);
      expect(groups[0]!.tasks.every((t) => t.why === 'low-confidence')).toBe(true);
      expect(await m.gaps({ since: new Date(Date.now() + 60_000) })).toEqual([]);

      // a line past the retention is dropped from the file when the log is read; a torn line is skipped
      await appendFile(
        join(dir, 'gaps.jsonl'),
        `${JSON.stringify({ at: '2020-01-01T00:00:00Z', task: 'old', cores: null, why: 'empty', bestScore: null })}\n{"at": "2026-`,
      );
      expect((await m.gaps()).map((g) => g.task)).not.toContain('old');
      expect(await readFile(join(dir, 'gaps.jsonl'), 'utf8')).not.toContain('"old"');
    } finally {
      await m.close();
    }
    const quiet = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: { MEMCORE_GAPS_LOG: 'false' } });
    try {
      await quiet.ingest(EXAMPLE_FILE);
      await quiet.buildTaskContext('Bake a chocolate cake');
      expect(await quiet.gaps()).toEqual([]);
    } finally {
      await quiet.close();
    }
  });

  it('measures the chance level on the store: random queries of its own words', () => {
    const words = 'token refresh rotation family revoke session cookie database migration column index lock retry payment'.split(' ');
    const docs = Array.from({ length: 300 }, (_, i) => ({
      id: `d${i}`,
      text: Array.from({ length: 12 }, (_, j) => words[(i * 7 + j * 5) % words.length]).join(' '),
      group: 'g',
    }));
    const index = new KeywordIndex([...docs, { id: 'cake', text: 'chocolate cake recipe', group: 'g' }]);
    const floor = relevanceFloor(index);
    expect(floor).toBeGreaterThan(0);
    expect(floor).toBeLessThan(1);
    expect(relevanceFloor(index)).toBe(floor); // kept until the store changes by a fifth
    // a query of the rare words one document holds matches far above chance; common words alone do not
    const share = (q: string) => index.search(q, { limit: 1 })[0]!.score / index.queryWeight(q);
    expect(share('chocolate cake')).toBeGreaterThan(floor);
    expect(share('token cookie marzipan nougat')).toBeLessThan(floor);
    expect(index.queryWeight('token chocolate')).toBeGreaterThan(index.queryWeight('token'));
  });
});
