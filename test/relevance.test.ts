import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_RELEVANT_MEMORY } from '../src/format/formatContext.js';
import { formatContext, openMemory } from '../src/index.js';
import { KeywordIndex } from '../src/store/resident/keywordIndex.js';
import { relevanceFloor } from '../src/retrieve/relevance.js';
import { EXAMPLE_FILE, tempDir, wordHashEmbedder } from './helpers.js';

describe('no relevant memory is an answer', () => {
  it('marks a task the store knows nothing about low-confidence, and its prompt block says so', async () => {
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      const cake = await m.buildTaskContext('Bake a chocolate cake with whipped cream');
      expect(cake.entries.length).toBeGreaterThan(0); // the closest entries are still there for a program
      expect(cake.lowConfidence).toBe(true);
      expect(
        cake.notes.some((n) => /^low confidence: no entry is named by the task, and the best keyword match covers \d+% /.test(n)),
      ).toBe(true);
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
