/**
 * The offline model on worker threads gives the same vectors as on the caller's thread: an ingest
 * spread over workers stores what a single thread would have.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { localEmbedder, openMemory } from '../src/index.js';
import { localWorkersWarm } from '../src/embed/localEmbedder.js';
import { embedForWrite } from '../src/embed/embedder.js';
import { tempDir, wordHashEmbedder } from './helpers.js';
import { nodeArgs } from './cliProcess.js';

describe('the local model on worker threads', () => {
  it('gives the vectors the caller thread gives, in order, for a call of many batches', async () => {
    const texts = Array.from({ length: 150 }, (_, i) => `Entry ${i}: ${'refresh token rotation '.repeat(1 + (i % 5))}and note ${i}.`);
    const single = await localEmbedder({ workers: 1 }).embed(texts);
    const spread = await localEmbedder({ workers: 2 }).embed(texts);
    expect(spread).toHaveLength(150);
    for (let i = 0; i < texts.length; i++) {
      let diff = 0;
      for (let j = 0; j < 512; j++) diff = Math.max(diff, Math.abs(spread[i]![j]! - single[i]![j]!));
      expect(diff, `text ${i}`).toBeLessThan(1e-5);
    }
    expect(() => localEmbedder({ workers: 0 })).toThrow(/workers must be an integer from 1 to 64/);
  });

  it("embeds a write's lone text on a worker once the process embeds queries, as the caller thread would", async () => {
    const embedder = localEmbedder({ workers: 2 });
    const text = 'Rotate the refresh token on every use, and revoke the family on reuse.';
    const [onThread] = await embedder.embed([text]); // a query: on this thread
    // A write while the workers are not warm embeds here and starts them loading their models.
    await embedForWrite(embedder, [text]);
    await localWorkersWarm(2);
    // While the write's text is on a worker, this thread takes turns at other work.
    let turns = 0;
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const [forWrite] = await embedForWrite(embedder, [text]);
    ticking = false;
    expect(turns).toBeGreaterThan(0);
    let diff = 0;
    for (let j = 0; j < 512; j++) diff = Math.max(diff, Math.abs(forWrite![j]! - onThread![j]!));
    expect(diff).toBeLessThan(1e-5);
  });

  it('keeps the stored vectors (to 1e-6) when a call is sorted by length and split over the workers', async () => {
    const reference = JSON.parse(await readFile(new URL('./fixtures/localModel/vectors.json', import.meta.url), 'utf8')) as {
      texts: string[];
      vectors: number[][];
    };
    // 70 texts (more than one worker call's worth), the stored ones among fillers of every length.
    const texts = Array.from({ length: 70 }, (_, i) => `note ${i} ${'payment idempotency key '.repeat(i % 23)}`.trim());
    reference.texts.forEach((t, i) => (texts[i * 11] = t));
    const vectors = await localEmbedder({ workers: 2 }).embed(texts);
    expect(vectors).toHaveLength(70);
    reference.vectors.forEach((expected, i) => {
      let diff = 0;
      for (let j = 0; j < 512; j++) diff = Math.max(diff, Math.abs(vectors[i * 11]![j]! - expected[j]!));
      expect(diff, reference.texts[i]).toBeLessThan(1e-6);
    });
  });

  it('lets a CLI ingest that used the workers exit by itself', async () => {
    const dir = await tempDir();
    const file = join(dir, 'm.json');
    await writeFile(
      file,
      JSON.stringify({
        core_id: 'c',
        entries: Array.from({ length: 150 }, (_, i) => ({ id: `e${i}`, title: `Entry ${i}`, content: `Note ${i} on token rotation.` })),
      }),
    );
    // An idle worker holding the process open would leave this call waiting until the test times out.
    const { stdout } = await promisify(execFile)(process.execPath, nodeArgs(['ingest', file, '--db', join(dir, 'db'), '--json']), {
      env: { ...process.env, MEMCORE_EMBED_WORKERS: '2' },
    });
    expect(JSON.parse(stdout)).toMatchObject([{ entries: { added: 150 }, embedded: 150 }]);
  });

  it('loads the model and starts the workers for the writes when a server warms up, before any call', async () => {
    // Three workers: a pool no other test of this file starts (one pool per size and process).
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: localEmbedder({ workers: 3 }), env: {} });
    try {
      await m.warm();
      // No call has embedded anything, yet the pool loads its three models (else this waits until the test times out).
      await localWorkersWarm(3);
      const { id } = await m.remember({ title: 'Warm note', content: 'written after the warm-up', core: 'w' });
      expect((await m.search('warm-up note', { overrides: { cores: ['w'] } })).map((h) => h.entry.id)).toContain(id);
    } finally {
      await m.close();
    }
    // An embedder with nothing to load is not called.
    const words = wordHashEmbedder();
    let calls = 0;
    const counted = { ...words, embed: (texts: string[]) => (calls++, words.embed(texts)) };
    const other = await openMemory({ path: join(await tempDir(), 'db'), embedder: counted, env: {} });
    try {
      await other.warm();
      expect(calls).toBe(0);
    } finally {
      await other.close();
    }
  });
});
