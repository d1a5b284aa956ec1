import { describe, expect, it } from 'vitest';
import { buildPeers, PEERS, type PeerDocument } from '../src/eval/peers.js';
import { mulberry32 } from '../src/embed/matryoshka.js';

/** The peers are what memcore is compared with: each must answer what its kind of search finds, filtered like memcore's `cores`. */
describe('peers (LanceDB and Orama on the same entries and vectors)', () => {
  const rand = mulberry32(5);
  const vector = () => Float32Array.from({ length: 16 }, () => rand() - 0.5);
  const documents: PeerDocument[] = Array.from({ length: 60 }, (_, i) => ({
    id: `d${i}`,
    core: i % 2 === 0 ? 'even' : 'odd',
    text: i === 7 ? 'Refresh tokens rotate on every use' : `filler passage number ${i} about nothing in particular`,
    vector: vector(),
  }));

  it('each finds by words or by vector what it should, and honours the cores filter', async () => {
    const set = await buildPeers(documents);
    try {
      expect(set.peers.map((p) => p.name)).toEqual([...PEERS]);
      for (const peer of set.peers) {
        const byVector = await peer.search('zzz', documents[12]!.vector, 5);
        const byWords = await peer.search('rotating refresh token', documents[40]!.vector, 5);
        // Full-text search finds the passage through stemming (rotating → rotate, token → tokens); vector search finds the vector's owner.
        if (peer.name.endsWith('-vector')) expect(byVector[0], peer.name).toBe('d12');
        else expect(byWords, peer.name).toContain('d7');
        const odd = await peer.search('refresh passage', documents[12]!.vector, 10, ['odd']);
        expect(odd.length, peer.name).toBeGreaterThan(0);
        expect(
          odd.every((id) => Number(id.slice(1)) % 2 === 1),
          `${peer.name}: ${odd.join(',')}`,
        ).toBe(true);
      }
    } finally {
      await set.close();
    }
  });
});
