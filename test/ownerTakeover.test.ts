import { describe, expect, it } from 'vitest';
import { openMemory } from '../src/index.js';
import { PROTOCOL, type Hello } from '../src/server/controlSocket.js';
import { startOwner } from '../src/server/owner.js';
import { reachOrBecomeOwner, type Ownership } from '../src/server/stdioRelay.js';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXAMPLE_FILE, tempDir, wordHashEmbedder } from './helpers.js';

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

/** A library user opening a folder that another process holds open. */
describe('openMemory on a folder another process holds', () => {
  it('is refused with an error that names the way out, and the holder goes on', async () => {
    const dir = await tempDir();
    const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    await first.ingest(EXAMPLE_FILE);
    await first.close();
    const script = join(await tempDir(), 'hold.mts');
    await writeFile(
      script,
      [
        `import { openMemory } from ${JSON.stringify(fileURLToPath(new URL('../src/index.ts', import.meta.url)))};`,
        `import { wordHashEmbedder } from ${JSON.stringify(fileURLToPath(new URL('../bench/synthetic.ts', import.meta.url)))};`,
        `const m = await openMemory({ path: ${JSON.stringify(dir)}, embedder: wordHashEmbedder(), env: {} });`,
        `console.log('ready', (await m.stats()).entries);`,
        `process.stdin.resume();`,
        `process.stdin.on('end', async () => { await m.close(); process.exit(0); });`,
      ].join('\n'),
    );
    const holder = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const ready = await new Promise<string>((resolve, reject) => {
        holder.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(d.toString().trim()));
        holder.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
      });
      expect(ready).toMatch(/^ready \d+$/);
      await expect(openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} })).rejects.toThrow(
        /is open in another process .*memcore serve/,
      );
    } finally {
      holder.stdin!.end();
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    // the holder closed cleanly, and the folder opens again
    const again = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    expect((await again.stats()).entries).toBeGreaterThan(0);
    await again.close();
  });
});
