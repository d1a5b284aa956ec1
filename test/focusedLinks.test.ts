/**
 * A small write auto-links against the entries the indexes in memory say can take part
 * (ingest/indexer.ts, focusedCorpus), not every stored entry: the links must be the ones the
 * whole-store pass (findLinks over every entry) finds, both ways, code included, and a name
 * mentioned by too many entries must still link nothing.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMemory } from '../src/index.js';
import { findLinks } from '../src/ingest/autoLink.js';
import type { CodeLocation } from '../src/model/types.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

const TOPICS = ['ledger', 'payout', 'refund', 'invoice', 'webhook', 'cursor', 'tenant', 'quota', 'session', 'canary'];
const title = (i: number) => `${TOPICS[i % 10]} ${TOPICS[(i * 3 + 1) % 10]} rule ${i}`;

describe('auto-linking a small write from the indexes in memory', () => {
  it('finds the links the whole-store pass finds', async () => {
    const base = Array.from({ length: 40 }, (_, i) => ({
      id: `b${i}`,
      core_id: 'k',
      title: title(i),
      // Each mentions two others, a name a later write takes (incoming links), and, for 8 of them,
      // the name everyone talks about (too common to link).
      content: `See ${title((i + 7) % 40)} and ${title((i + 13) % 40)}; later: fresh topic ${i % 10}.${i < 8 ? ' Also the Shared Ledger Policy.' : ''} Uses settleBatch${i % 4}.`,
    }));
    const code = Array.from({ length: 4 }, (_, i) => ({
      id: `code${i}`,
      codebase_id: 'app',
      file_path: `src/pay/settle${i}.ts`,
      symbol: `settleBatch${i}`,
    }));
    const writes = [
      { id: 'n0', title: 'Fresh topic 2', content: `Builds on ${title(3)} and ${title(22)}; calls settleBatch1 in settle1.ts.` },
      { id: 'n1', title: 'Shared Ledger Policy', content: 'Everyone cites it.' },
      { id: 'n2', title: 'Fresh topic 4', content: `Mentions Fresh topic 2 and the Shared Ledger Policy, and ${title(39)}.` },
      { id: 'n3', title: 'Quiet note', content: 'Names nothing at all.' },
    ];

    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingestDocument({ entries: base, code_locations: code }, { autoLink: true });
      // Bigger than a small write: the whole-store pass made these.
      const before = new Set(((await m.exportMemory()).relations ?? []).map((r) => `${r.type} ${r.from} ${r.to}`));
      const codeLocations: CodeLocation[] = code.map((c) => ({
        id: c.id,
        codebaseId: c.codebase_id,
        filePath: c.file_path,
        symbol: c.symbol,
        startLine: null,
        endLine: null,
        language: null,
        fingerprint: null,
        kind: null,
        revision: null,
      }));
      const corpus = base.map((e) => ({ id: e.id, title: e.title, aliases: [], content: e.content }));
      const expected = new Set<string>();
      for (const w of writes) {
        await m.remember({ ...w, core: 'k' });
        corpus.push({ id: w.id, title: w.title, aliases: [], content: w.content });
        for (const r of findLinks(corpus, codeLocations, new Set([w.id]))) expected.add(`${r.type} ${r.from} ${r.to}`);
      }
      const written = ((await m.exportMemory()).relations ?? []).map((r) => `${r.type} ${r.from} ${r.to}`).filter((r) => !before.has(r));
      expect(new Set(written)).toEqual(expected);
      // The links the test is about are among them: outgoing, incoming, to code, and none to the common name.
      expect(expected).toContain(`RELATED n0 b3`);
      expect(expected).toContain(`RELATED b2 n0`);
      expect(expected).toContain(`REFERENCES_CODE n0 code1`);
      expect(expected).toContain(`RELATED n2 n0`);
      expect([...expected].filter((r) => r.endsWith(' n1'))).toEqual([]);
    } finally {
      await m.close();
    }
  });

  it('links to code written or removed after the code locations were first held', async () => {
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      const code = (i: number) => ({ id: `held${i}`, codebase_id: 'app', file_path: `src/held/part${i}.ts`, symbol: `heldPart${i}` });
      await m.ingestDocument({ code_locations: [code(0)] }, { source: 'code' });
      const first = await m.remember({ id: 'r0', core: 'k', title: 'First note', content: 'Calls heldPart0 and heldPart1.' });
      // Only the code that exists: heldPart1 is not a code location yet.
      expect(first.links.filter((l) => l.type === 'REFERENCES_CODE').map((l) => l.to)).toEqual(['held0']);
      // A write of code after the list was held: the next remember sees it.
      await m.ingestDocument({ code_locations: [code(0), code(1), code(2)] }, { source: 'code', sync: true });
      const second = await m.remember({ id: 'r1', core: 'k', title: 'Second note', content: 'Calls heldPart1 too.' });
      expect(second.links.filter((l) => l.type === 'REFERENCES_CODE').map((l) => l.to)).toEqual(['held1']);
      // A sync that removes code (held2, which nothing references): the next remember does not link to it.
      expect(
        (await m.ingestDocument({ code_locations: [code(0), code(1)] }, { source: 'code', sync: true })).sync?.removed.codeLocations,
      ).toBe(1);
      const third = await m.remember({ id: 'r2', core: 'k', title: 'Third note', content: 'Calls heldPart0 and heldPart2.' });
      expect(third.links.filter((l) => l.type === 'REFERENCES_CODE').map((l) => l.to)).toEqual(['held0']);
    } finally {
      await m.close();
    }
  });
});
