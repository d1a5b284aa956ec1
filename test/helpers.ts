import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import type { Embedder } from '../src/index.js';

export const EXAMPLE_FILE = fileURLToPath(new URL('../examples/memory/orders-api.yaml', import.meta.url));

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A fresh folder, removed after the test. */
export async function tempDir(prefix = 'memcore-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/**
 * A deterministic bag-of-words embedder (feature hashing of lower-cased words), for tests that
 * need exact control over which entry is nearest. It implements the public Embedder interface;
 * `calls` counts the texts it embedded.
 */
export function wordHashEmbedder(dimensions = 64): Embedder & { calls: number } {
  const self = {
    id: `test:word-hash-${dimensions}`,
    dimensions,
    truncatable: true,
    calls: 0,
    async embed(texts: string[]) {
      self.calls += texts.length;
      return texts.map((t) => {
        const v = new Float32Array(dimensions);
        for (const word of t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
          let h = 2166136261;
          for (const ch of word) h = Math.imul(h ^ ch.codePointAt(0)!, 16777619);
          v[(h >>> 0) % dimensions]! += 1;
        }
        if (v.every((x) => x === 0)) v[0] = 1;
        const norm = Math.hypot(...v);
        return v.map((x) => x / norm);
      });
    },
  };
  return self;
}
