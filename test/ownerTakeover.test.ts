import { describe, expect, it } from 'vitest';
import { openMemory } from '../src/index.js';
import { PROTOCOL, type Hello } from '../src/server/controlSocket.js';
import { startOwner } from '../src/server/owner.js';
import { reachOrBecomeOwner, type Ownership } from '../src/server/stdioRelay.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

/** Taking a folder over after its owner died: a passing failure is tried again, a lasting one is reported. */
describe('reachOrBecomeOwner', () => {
  const hello: Hello = { memcore: PROTOCOL, kind: 'mcp' };

  it('tries again after a failure that passes, and becomes the owner', async () => {
    const dir = await tempDir();
    let attempts = 0;
    const become = async (): Promise<Ownership> => {
      if (++attempts <= 2) throw new Error('the machine was too busy');
      const engine = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
      return { engine, owner: await startOwner(engine, { runCli: async () => 0, version: 'test' }) };
    };
    const { socket, ownership } = await reachOrBecomeOwner(dir, hello, become);
    try {
      expect(attempts).toBe(3);
      expect(ownership).toBeDefined();
      expect(socket.destroyed).toBe(false);
    } finally {
      socket.destroy();
      await ownership!.owner.close();
      await ownership!.engine.close();
    }
  });

  it('reports a failure that lasts', async () => {
    const dir = await tempDir();
    let attempts = 0;
    const become = async (): Promise<Ownership> => {
      attempts++;
      throw new Error('the folder is damaged');
    };
    await expect(reachOrBecomeOwner(dir, hello, become)).rejects.toThrow('the folder is damaged');
    expect(attempts).toBe(4);
  });
});
