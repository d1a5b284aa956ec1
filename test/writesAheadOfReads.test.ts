/**
 * A remember goes ahead of the reads that arrive while it is queued or running (engine/accessGate.ts):
 * they wait for it, and see it; a read that came first does not wait, and reads never wait for a
 * write queued after them. The reads held go on once the write's caller has had its answer.
 */
import { describe, expect, it } from 'vitest';
import { openMemory } from '../src/index.js';
import { AccessGate } from '../src/engine/accessGate.js';
import { EXAMPLE_FILE, tempDir, wordHashEmbedder } from './helpers.js';

describe('writes ahead of reads', () => {
  it('a read that arrives while a remember or a forget is under way waits for it and sees it', async () => {
    const m = await openMemory({ path: await tempDir(), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      await m.listEntries({ cores: ['notes'] }); // the read path loaded
      for (let i = 0; i < 5; i++) {
        // Not awaited: the reads below are asked while the write is queued or running.
        const written = m.remember({
          id: `ahead-${i}`,
          title: `Ahead note ${i}`,
          content: `Detail ${i} of the ahead note.`,
          core: 'notes',
        });
        const [listed, found] = await Promise.all([m.listEntries({ cores: ['notes'] }), m.getEntries([`ahead-${i}`])]);
        await written;
        expect(listed.map((e) => e.id)).toContain(`ahead-${i}`);
        expect(found.map((e) => e.id)).toEqual([`ahead-${i}`]);
      }
      // A forget too: the read after it no longer lists the entry.
      const forgotten = m.forget('ahead-0', { reason: 'replaced' });
      const after = await m.listEntries({ cores: ['notes'] });
      await forgotten;
      expect(after.map((e) => e.id)).not.toContain('ahead-0');
      expect(after.map((e) => e.id)).toContain('ahead-1');
    } finally {
      await m.close();
    }
  });

  it('holds a read only for the writes queued before it', async () => {
    const gate = new AccessGate();
    const runGroup = async (writes: { work: () => Promise<unknown>; resolve: (v: unknown) => void }[]) => {
      for (const w of writes) w.resolve(await w.work());
    };
    const blocked = () => {
      let release!: () => void;
      const work = () => new Promise<void>((resolve) => (release = resolve));
      return { work, release: () => release() };
    };
    const order: string[] = [];
    const a = blocked();
    const first = gate.grouped(a.work, runGroup, undefined, { aheadOfReads: true });
    const read = gate.reading().then((held) => {
      order.push('read');
      held[Symbol.dispose]();
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]); // the write queued before it is not done
    // A second write queued after the read: the read does not wait for it.
    const b = blocked();
    const second = gate.grouped(b.work, runGroup, undefined, { aheadOfReads: true });
    a.release();
    await first;
    await read;
    expect(order).toEqual(['read']);
    // A read that comes now waits for the second.
    const late = gate.reading().then((held) => {
      order.push('late read');
      held[Symbol.dispose]();
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['read']);
    b.release();
    await second;
    await late;
    expect(order).toEqual(['read', 'late read']);
    // Nothing queued ahead: a read enters at once.
    (await gate.reading())[Symbol.dispose]();
  });

  it("lets the reads held for a write go on after the write's caller had its answer", async () => {
    const gate = new AccessGate();
    const runGroup = async (writes: { work: () => Promise<unknown>; resolve: (v: unknown) => void }[]) => {
      for (const w of writes) w.resolve(await w.work());
    };
    const order: string[] = [];
    const write = gate.grouped(async () => 'written', runGroup, undefined, { aheadOfReads: true });
    const reads = Array.from({ length: 3 }, (_, i) =>
      gate.reading().then((held) => {
        order.push(`read ${i}`);
        held[Symbol.dispose]();
      }),
    );
    // The caller's answer takes a few steps (a server's: its tool, the MCP layer, the transport).
    const answered = write.then(async (v) => {
      for (let step = 0; step < 5; step++) await null;
      order.push(`caller got ${String(v)}`);
    });
    await Promise.all([answered, ...reads]);
    expect(order).toEqual(['caller got written', 'read 0', 'read 1', 'read 2']);
  });
});
