import { describe, expect, it } from 'vitest';
import { withQueryCache } from '../src/embed/queryEmbeddingCache.js';
import { wordHashEmbedder } from './helpers.js';

describe('withQueryCache', () => {
  it('embeds a repeated query once and keeps the model’s traits', async () => {
    const model = Object.assign(wordHashEmbedder(32), { matryoshkaDimensions: [16, 32], cacheVectors: false });
    const cached = withQueryCache(model);
    expect(cached).toMatchObject({ id: model.id, dimensions: 32, truncatable: true, matryoshkaDimensions: [16, 32], cacheVectors: false });
    const [a] = await cached.embed(['refresh token rotation']);
    const [b, c] = await cached.embed(['refresh token rotation', 'another query']);
    expect(b).toBe(a);
    expect(c).not.toEqual(a);
    expect(model.calls).toBe(2);
  });
});
