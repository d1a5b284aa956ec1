import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach } from 'vitest';
import { openMemory, type Embedder, type MemoryEngine, type OpenMemoryOptions } from '../src/index.js';
import { mulberry32 } from '../src/embed/matryoshka.js';

export const EXAMPLE_FILE = fileURLToPath(new URL('../examples/memory/orders-api.yaml', import.meta.url));

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const fileDirs: string[] = [];
afterAll(async () => {
  await Promise.all(fileDirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A fresh folder kept for the tests of one file (a store built once and opened by several), removed after them. */
export async function tempDirForFile(prefix = 'memcore-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  fileDirs.push(dir);
  return dir;
}

/** A fresh folder, removed after the test. */
export async function tempDir(prefix = 'memcore-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

import { wordHashEmbedder } from '../bench/synthetic.js';
export { wordHashEmbedder };
import { fnv1a } from '../bench/synthetic.js';

/**
 * Gaussian vectors in a fixed `latent`-dimensional subspace of `dimensions` (the whole space when
 * they are equal), seeded by the text: how much of a vector the small dimensions can keep is the
 * test's choice.
 */
export function gaussianEmbedder(dimensions: number, latent: number): Embedder {
  const gaussians = (rand: () => number, n: number) =>
    Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand()));
  const basisRand = mulberry32(1);
  const basis = Array.from({ length: latent }, () => gaussians(basisRand, dimensions));
  return {
    id: `test:gaussian-${dimensions}-${latent}`,
    dimensions,
    truncatable: false,
    async embed(texts) {
      return texts.map((t) => {
        const z = gaussians(mulberry32(fnv1a(t)), latent);
        const v = new Float32Array(dimensions);
        z.forEach((zi, i) => basis[i]!.forEach((b, d) => (v[d]! += zi * b)));
        const norm = Math.hypot(...v);
        return v.map((x) => x / norm);
      });
    },
  };
}

/**
 * An embedder that gives chosen vectors to texts containing chosen phrases (first match wins) and
 * a fixed far-away vector otherwise: a fixture where the test decides what is near what.
 */
export function phraseEmbedder(vectors: [phrase: string, vector: number[]][], dimensions: number): Embedder {
  const fallback = Array.from({ length: dimensions }, (_, i) => (i === dimensions - 1 ? 1 : 0));
  return {
    id: `test:phrase-${dimensions}`,
    dimensions,
    truncatable: true,
    async embed(texts: string[]) {
      return texts.map((t) => {
        const v = vectors.find(([phrase]) => t.includes(phrase))?.[1] ?? fallback;
        const norm = Math.hypot(...v);
        return Float32Array.from(v, (x) => x / norm);
      });
    },
  };
}

/**
 * `embedder` with its vectors kept by text for the test file: a file that builds several stores of
 * the same entries on a real model (the local one takes seconds per few hundred texts, many more
 * on a loaded machine) embeds each text once. Same id, dimensions and vectors as the model.
 */
export function memoEmbedder(embedder: Embedder): Embedder {
  const known = new Map<string, Float32Array>();
  return {
    ...embedder,
    async embed(texts, signal) {
      const missing = [...new Set(texts.filter((t) => !known.has(t)))];
      if (missing.length > 0) (await embedder.embed(missing, signal)).forEach((v, i) => known.set(missing[i]!, v));
      // copies: a caller may keep or change what it is given
      return texts.map((t) => Float32Array.from(known.get(t)!));
    },
  };
}

/** `n` distinct, plausible memory entries built from a vocabulary (deterministic). */
export function syntheticEntries(n: number, coreId = 'synthetic'): { id: string; core_id: string; title: string; content: string }[] {
  const subjects = [
    'refresh tokens',
    'database migrations',
    'the payment retry',
    'cache eviction',
    'feature flags',
    'the search index',
    'log rotation',
    'rate limiting',
    'image uploads',
    'webhook delivery',
    'session cookies',
    'the build pipeline',
    'queue consumers',
    'backup restores',
    'dns failover',
    'email bounces',
    'csv exports',
  ];
  const verbs = [
    'must be idempotent',
    'broke in production when',
    'needs a timeout because',
    'is owned by the platform team since',
    'was rewritten after',
    'should be tested with',
    'leaks memory if',
    'is rate limited when',
  ];
  const objects = [
    'two pods start together',
    'the clock drifts',
    'the network partitions',
    'a customer retries',
    'the disk fills up',
    'traffic doubles at noon',
    'the vendor changes its API',
    'a deploy is rolled back',
    'certificates expire',
    'the schema changes',
  ];
  return Array.from({ length: n }, (_, i) => {
    const s = subjects[i % subjects.length]!;
    const v = verbs[Math.floor(i / subjects.length) % verbs.length]!;
    const o = objects[Math.floor(i / (subjects.length * verbs.length)) % objects.length]!;
    return {
      id: `s${i}`,
      core_id: coreId,
      title: `${s} ${v} ${o}`,
      content: `Note ${i}: ${s} ${v} ${o}. Keep this in mind when touching ${s}.`,
    };
  });
}

/** Opens a store on `dir` (the word-hash embedder, no environment settings unless given), runs `fn`, closes it. */
export async function withEngine<T>(dir: string, fn: (m: MemoryEngine) => Promise<T>, options: OpenMemoryOptions = {}): Promise<T> {
  const m = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {}, ...options });
  try {
    return await fn(m);
  } finally {
    await m.close();
  }
}

const ORDERS = `export function createOrder(items: string[]) {
  return { items, total: items.length };
}

export function cancelOrder(id: string) {
  return { id, cancelled: true };
}

export function helperThing() {
  return 42;
}
`;

/** A committed git repository in a temp folder: src/orders.ts (three functions) and src/legacy.ts. */
export async function shopRepo(): Promise<string> {
  const dir = join(await tempDir(), 'shop');
  await mkdir(join(dir, 'src'), { recursive: true });
  await writeFile(join(dir, 'src', 'orders.ts'), ORDERS);
  await writeFile(join(dir, 'src', 'legacy.ts'), 'export function oldPath() {\n  return "old";\n}\n');
  gitIn(dir, 'init', '-q', '-b', 'main');
  gitIn(dir, 'add', '.');
  gitIn(dir, 'commit', '-q', '-m', 'shop');
  return dir;
}

/** Runs git in `dir` as a test's author; returns stdout. */
export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=T', ...args], {
    cwd: dir,
    stdio: 'pipe',
    encoding: 'utf8',
  });
}

/** What a CLI call (`main(argv, io)`) printed: `out` and `err` lines, collected; `isTTY` false. */
export function capturedIo(): { io: { out: (t: string) => void; err: (t: string) => void; isTTY: boolean }; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t) => out.push(t), err: (t) => err.push(t), isTTY: false }, out, err };
}

/** Runs a setup command (mount, chattr); returns why it failed, or undefined. */
export function tryRun(command: string, args: string[]): string | undefined {
  try {
    execFileSync(command, args, { stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return `${command} ${args.join(' ')}: ${String((e as { stderr?: Buffer }).stderr ?? (e as Error).message).trim()}`;
  }
}
