/**
 * The local model's first load, raced (#50 item 13, #49 item 5): "Backend 'wasm' has not yet been
 * initialized" was seen once in ~150 CLI runs under load. A load is awaited to the end (the model
 * has embedded once) before any caller gets it, in threads and in processes started together.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadReadyModel } from '../src/embed/localEmbedder.js';
import { LocalModelPool } from '../src/embed/localModelPool.js';
import { localEmbedder } from '../src/index.js';
import { loaderArgs, runnable } from './cliProcess.js';

const run = promisify(execFile);

describe('the first load of the local model', () => {
  it('waits out a backend still initialising, and reports any other failure at once', async () => {
    // tfjs's own message, as the real backend throws it while its initialisation is in flight.
    const notReady = new Error(
      "Backend 'wasm' has not yet been initialized. Make sure to await tf.ready() or await tf.setBackend() before calling other methods",
    );
    let loads = 0;
    const model = await loadReadyModel(async () => {
      loads++;
      return { embed: async () => (loads < 3 ? Promise.reject(notReady) : [[1]]) };
    });
    expect(loads).toBe(3);
    expect(await model.embed(['x'])).toEqual([[1]]);
    let other = 0;
    await expect(loadReadyModel(async () => (other++, Promise.reject(new Error('no such file'))))).rejects.toThrow('no such file');
    expect(other).toBe(1);
    await expect(loadReadyModel(async () => Promise.reject(notReady), 2)).rejects.toThrow(/not yet been initialized/);
  });

  it('loads in four worker threads at once, each answering its first batch', async () => {
    const pool = new LocalModelPool(4);
    const batches = Array.from({ length: 8 }, (_, i) => [`first load ${i}`, `token rotation ${i}`]);
    const answers = await Promise.all(batches.map((b) => pool.embed(b)));
    const single = await localEmbedder({ workers: 1 }).embed(batches.flat());
    answers.flat().forEach((v, i) => {
      expect(v).toHaveLength(512);
      expect(Math.max(...v.map((x, j) => Math.abs(x - single[i]![j]!)))).toBeLessThan(1e-5);
    });
  }, 300_000);

  it('loads in four processes started together, each embedding its first text', async () => {
    // the library as the test run compiled it (test/testBuild.ts)
    const index = pathToFileURL(runnable(fileURLToPath(new URL('../src/index.ts', import.meta.url)))).href;
    const script = [
      `const { localEmbedder } = await import(${JSON.stringify(index)});`,
      "const [v] = await localEmbedder({ workers: 1 }).embed(['first load in a process']);",
      'console.log(v.length);',
    ].join('\n');
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, [...loaderArgs, '--input-type=module', '-e', script], { cwd: process.cwd() })),
    );
    for (const r of runs) expect(r.stdout.trim()).toBe('512');
  }, 300_000);
});
