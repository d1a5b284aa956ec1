import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAIEmbedder, openMemory } from '../src/index.js';
import { embeddingsReply, startFakeOpenAI, vectorFor, type FakeOpenAI } from './openaiServer.js';
import { tempDir } from './helpers.js';

let server: FakeOpenAI;
beforeEach(async () => {
  server = await startFakeOpenAI(8);
});
afterEach(async () => {
  await server.close();
});

const norm = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

describe('OpenAI-compatible embedder (real openai client, real HTTP on 127.0.0.1)', () => {
  it('batches, keeps order even when the server reorders, normalises and sends the key', async () => {
    server.respond = (body, _n, res) => embeddingsReply(res, body.input as string[], 8, { shuffle: true });
    const e = openAIEmbedder({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'nomic-embed-text', dimensions: 8, batchSize: 2 });
    const texts = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
    const vectors = await e.embed(texts);
    expect(server.requests.map((r) => (r.body.input as string[]).length)).toEqual([2, 2, 1]);
    expect(server.requests[0]).toMatchObject({ path: '/v1/embeddings', auth: 'Bearer sk-test', body: { model: 'nomic-embed-text' } });
    expect(server.requests[0]!.body.dimensions).toBeUndefined();
    vectors.forEach((v, i) => {
      const want = norm(vectorFor(texts[i]!, 8));
      v.forEach((x, j) => expect(x).toBeCloseTo(want[j]!, 5));
    });
  });

  it('asks the server for dimensions when told to', async () => {
    const e = openAIEmbedder({ baseURL: server.baseURL, model: 'text-embedding-3-small', dimensions: 8, sendDimensions: true });
    await e.embed(['x']);
    expect(server.requests[0]!.body.dimensions).toBe(8);
  });

  it('truncates a longer vector only for truncatable models, and rejects wrong lengths otherwise', async () => {
    server.respond = (body, _n, res) => embeddingsReply(res, body.input as string[], 12);
    const trunc = openAIEmbedder({ baseURL: server.baseURL, model: 'm', dimensions: 8, truncatable: true });
    const [v] = await trunc.embed(['abc']);
    expect(v!.length).toBe(8);
    expect(Math.hypot(...v!)).toBeCloseTo(1, 5);
    const strict = openAIEmbedder({ baseURL: server.baseURL, model: 'm', dimensions: 8 });
    await expect(strict.embed(['abc'])).rejects.toThrow(/returned a 12-dimension vector, expected 8/);
  });

  it('rejects non-finite values and missing vectors', async () => {
    server.respond = (_b, _n, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ index: 0, embedding: [1, 0, 0, 0, 0, 0, 0, null] }], model: 'm' }));
    };
    const e = openAIEmbedder({ baseURL: server.baseURL, model: 'm', dimensions: 8 });
    await expect(e.embed(['a'])).rejects.toThrow(/non-finite value at position 7/);
    await expect(e.embed(['a', 'b'])).rejects.toThrow(/returned 1 vectors for 2 texts/);
  });

  it('retries a 429 and then succeeds', async () => {
    server.respond = (body, n, res) => {
      if (n === 1) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '10' });
        res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit' } }));
      } else embeddingsReply(res, body.input as string[], 8);
    };
    const e = openAIEmbedder({ baseURL: server.baseURL, model: 'm', dimensions: 8, maxRetries: 2 });
    expect(await e.embed(['a'])).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('gives a clear error when 5xx retries run out', async () => {
    server.respond = (_b, _n, res) => {
      res.writeHead(500, { 'content-type': 'application/json', 'retry-after-ms': '1' });
      res.end(JSON.stringify({ error: { message: 'boom' } }));
    };
    const e = openAIEmbedder({ baseURL: server.baseURL, model: 'm', dimensions: 8, maxRetries: 1 });
    await expect(e.embed(['a'])).rejects.toThrow(/embedding request to http:\/\/127\.0\.0\.1:\d+\/v1 \(model "m"\) failed with HTTP 500/);
    expect(server.requests).toHaveLength(2);
  });

  it('says which URL could not be reached and what to check', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const e = openAIEmbedder({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'nomic-embed-text', dimensions: 8, maxRetries: 0 });
    await expect(e.embed(['a'])).rejects.toThrow(
      `embedding request to http://127.0.0.1:${port}/v1 (model "nomic-embed-text") could not connect (ECONNREFUSED): is the server running at that address? For Ollama, start it with \`ollama serve\` (default http://127.0.0.1:11434/v1)`,
    );
  });

  it('times out and aborts', async () => {
    server.respond = () => undefined; // never answers
    const slow = openAIEmbedder({ baseURL: server.baseURL, model: 'm', dimensions: 8, timeoutMs: 100, maxRetries: 0 });
    await expect(slow.embed(['a'])).rejects.toThrow(/embedding request to .* timed out: is the server overloaded/);
    const ac = new AbortController();
    const pending = slow.embed(['a'], ac.signal);
    setTimeout(() => ac.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('refuses bad options at construction', () => {
    expect(() => openAIEmbedder({ model: '', dimensions: 8 })).toThrow(/embedder.model is required/);
    expect(() => openAIEmbedder({ model: 'm', dimensions: 0 })).toThrow(/dimensions must be a positive integer/);
  });

  it('drives a whole engine: ingest and search through the server', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder: { provider: 'openai', baseURL: server.baseURL, model: 'm', dimensions: 8 } });
    try {
      await m.ingestDocument({
        core_id: 'c',
        entries: [
          { id: 'a', title: 'aaaa', content: 'bbbb' },
          { id: 'b', title: 'cc', content: 'dd' },
        ],
      });
      const hits = await m.semanticSearch('aaaa\nbbbb', { limit: 1 });
      expect(hits[0]!.entry.id).toBe('a');
      expect(hits[0]!.similarity).toBeCloseTo(1, 4);
      expect((await m.stats()).embedder).toEqual({ id: 'openai:m', dimensions: 8 });
    } finally {
      await m.close();
    }
  });
});

describe('long texts, concurrency, Matryoshka sizes and the embedding cache', () => {
  it('splits long texts into overlapping chunks and mean-pools them into one unit vector', async () => {
    const e = openAIEmbedder({ baseURL: server.baseURL, model: 'm', dimensions: 8, chunkTokens: 16, overlapTokens: 4, batchSize: 100 });
    const long = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const [pooled, short] = await e.embed([long, 'short text']);
    const inputs = server.requests[0]!.body.input as string[];
    expect(inputs.length).toBeGreaterThan(3);
    expect(inputs.at(-1)).toBe('short text');
    const chunks = inputs.slice(0, -1);
    expect(chunks[0]!.startsWith('word0 ')).toBe(true);
    expect(chunks.at(-1)!.endsWith('word39')).toBe(true);
    expect(chunks[1]!.split(' ')[0]).not.toBe('word0'); // moves on …
    expect(chunks[0]!.includes(chunks[1]!.split(' ')[0]!)).toBe(true); // … with overlap
    expect(Math.hypot(...pooled!)).toBeCloseTo(1, 5);
    const want = norm(vectorFor('short text', 8));
    short!.forEach((x, j) => expect(x).toBeCloseTo(want[j]!, 5));
    expect(() => openAIEmbedder({ model: 'm', dimensions: 8, chunkTokens: 16, overlapTokens: 16 })).toThrow(/overlapTokens/);
  });

  it('leads every chunk of a long entry with its title line, so each says what the entry is about', async () => {
    const e = openAIEmbedder({ baseURL: server.baseURL, model: 'm', dimensions: 8, chunkTokens: 16, overlapTokens: 4, batchSize: 100 });
    const body = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    await e.embed([`Token rotation\n${body}`, `${'a long first line '.repeat(4)}\n${body}`]);
    const inputs = server.requests[0]!.body.input as string[];
    const titled = inputs.filter((t) => t.startsWith('Token rotation\n'));
    expect(titled.length).toBeGreaterThan(3);
    expect(titled.every((t) => t.split('\n')[1]!.startsWith('word'))).toBe(true);
    expect(titled.at(-1)!.endsWith('word39')).toBe(true);
    // A first line longer than a quarter of a chunk is no title: the text is chunked as it is.
    expect(inputs.filter((t) => t.startsWith('a long first line'))).toHaveLength(1);
  });

  it('keeps several batches in flight and the order of the results', async () => {
    server.respond = (body, _n, res) => setTimeout(() => embeddingsReply(res, body.input as string[], 8, { shuffle: true }), 50);
    const e = openAIEmbedder({ baseURL: server.baseURL, model: 'm', dimensions: 8, batchSize: 1, concurrency: 3 });
    const texts = ['a1', 'b22', 'c333', 'd4444', 'e55555', 'f666666'];
    const vectors = await e.embed(texts);
    expect(server.maxInFlight).toBe(3);
    vectors.forEach((v, i) => expect(v[0]).toBeCloseTo(norm(vectorFor(texts[i]!, 8))[0]!, 5));
  });

  it("checks dimensions and the small-vector length against the model's Matryoshka sizes", async () => {
    expect(() => openAIEmbedder({ model: 'm', dimensions: 100, matryoshkaDimensions: [64, 128, 256] })).toThrow(
      /not one of the model's Matryoshka sizes \(64, 128, 256\)/,
    );
    const embedder = { provider: 'openai' as const, baseURL: server.baseURL, model: 'm', dimensions: 8, matryoshkaDimensions: [2, 4, 8] };
    const m = await openMemory({ path: await tempDir(), embedder, env: {} });
    await m.upsert([{ id: 'a', core_id: 'c', title: 't', content: 'c' }]);
    expect((await m.matryoshkaSearch('t')).smallDimensions).toBe(4); // the trained size nearest 128 below the full size
    await m.close();
    await expect(openMemory({ path: await tempDir(), embedder, smallDimensions: 3, env: {} })).rejects.toThrow(
      /smallDimensions 3 is not one of the model's Matryoshka sizes/,
    );
  });

  it('never sends the same text to the model twice, across deletes and runs', async () => {
    const dir = await tempDir();
    const embedder = { provider: 'openai' as const, baseURL: server.baseURL, model: 'm', dimensions: 8 };
    const entries = [
      { id: 'a', core_id: 'c', title: 'alpha', content: 'one' },
      { id: 'b', core_id: 'c', title: 'beta', content: 'two' },
    ];
    let m = await openMemory({ path: dir, embedder, env: {} });
    expect(await m.upsert(entries)).toMatchObject({ embedded: 2, fromCache: 0 });
    await m.delete(['a', 'b']);
    await m.close();
    const sent = server.requests.length;
    m = await openMemory({ path: dir, embedder, env: {} });
    expect(await m.upsert(entries)).toMatchObject({ entries: { added: 2 }, embedded: 0, fromCache: 2 });
    expect(server.requests.length).toBe(sent);
    expect(await m.upsert([{ id: 'a', core_id: 'c', title: 'alpha', content: 'changed' }])).toMatchObject({ embedded: 1, fromCache: 0 });
    await m.close();
  });
});
