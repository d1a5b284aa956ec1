/**
 * `memcore migrate --graph`: a folder moved from Kuzu to LadybugDB and back holds the same memory
 * (entries, relations of every type with their attributes, code locations, golden paths with their
 * steps, feedback); bad command lines and folders are refused with their exit codes; a migration
 * killed -9 midway leaves a folder that opens with all of it; and a Kuzu folder without the kuzu
 * package installed says which package to install.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { MemoryDocumentRecord } from '../src/model/memoryFile.js';
import { graphFileName, type GraphDriverName } from '../src/store/graph/drivers.js';
import { readMeta } from '../src/store/meta.js';
import { nodeArgs, scriptArgs } from './cliProcess.js';
import { tempDir } from './helpers.js';

/** Every relation type, with weights, kinds, relevances, steps with key concepts, and absent optional fields. */
const MEMORY = `version: 1
entries:
  - { id: rotate, core_id: auth, title: Rotate refresh tokens on every use, content: Each refresh issues a new token., entry_type: decision }
  - { id: long-lived, core_id: auth, title: "Refresh tokens live 90 days (it's old)", content: The first release kept tokens., entry_type: decision }
  - { id: revocation, core_id: auth, title: Revocation store in Redis, content: Revoked families are kept in Redis., entry_type: convention }
  - { id: race, core_id: auth, title: Two tabs refreshing at once, content: A grace window of ten seconds fixed it., entry_type: lesson }
  - { id: ünï \\ code, core_id: db, title: Money as numeric, content: Never floats for money., entry_type: convention, sensitivity: secret }
code_locations:
  - { id: code-route, codebase_id: api, file_path: src/auth/refresh.route.ts, symbol: refreshHandler, start_line: 12, end_line: 58, language: typescript }
  - { id: code-service, codebase_id: api, file_path: src/auth/tokenService.ts, symbol: rotateRefreshToken, start_line: 40 }
  - { id: code-store, codebase_id: api, file_path: src/auth/familyStore.ts }
golden_paths:
  - id: gp-refresh
    name: Refresh-token rotation
    concept: refresh token rotation
    description: How a refresh request is answered.
    steps:
      - { code: code-route, description: Parse the cookie., key_concepts: [cookie, problem+json] }
      - { code: code-service, key_concepts: [family id] }
      - { code: code-store, description: Swap the hashes. }
  - { id: gp-empty, name: A path with no concept }
relations:
  - { type: SUPERSEDES, from: rotate, to: long-lived }
  - { type: DEPENDS_ON, from: rotate, to: revocation }
  - { type: DEPENDS_ON, from: race, to: rotate }
  - { type: RELATED, from: race, to: revocation, weight: 0.35, kind: mention }
  - { type: RELATED, from: revocation, to: "ünï \\\\ code" }
  - { type: REFERENCES_CODE, from: rotate, to: code-service, relevance: 0.9 }
  - { type: REFERENCES_CODE, from: race, to: code-route }
  - { type: IMPLEMENTS, from: rotate, to: gp-refresh }
feedback:
  - { entry_id: rotate, useful: 1, at: "2026-11-20T10:00:00Z", note: saved a debugging session }
  - { entry_id: race, useful: 0.25, at: "2026-11-21T09:30:00Z" }
`;

const TASK = 'rotate refresh tokens when two tabs refresh';
const folderTool = fileURLToPath(new URL('./fixtures/folderTool.ts', import.meta.url));

/** Runs a process to its end. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
const memcore = (args: string[], env?: Record<string, string>) => run(nodeArgs(args), env);

/** What a folder holds, as its export and a context bundle show it (read in a process of its own). */
async function contents(dir: string): Promise<unknown> {
  const r = await run(scriptArgs(folderTool, ['contents', dir, TASK]));
  expect(r.stderr).toBe('');
  // Scores to 4 places: feedback's effect on them decays with the time since the rating.
  return JSON.parse(r.stdout, (key, value: unknown) =>
    typeof value === 'number' && !Number.isInteger(value) ? Number(value.toFixed(4)) : value,
  );
}

async function folderWith(graph: GraphDriverName): Promise<string> {
  const dir = join(await tempDir(), 'db');
  const file = `${dir}.yaml`;
  await writeFile(file, MEMORY);
  const r = await run(scriptArgs(folderTool, ['ingest', dir, file, graph]));
  expect(r.stderr).toBe('');
  expect((await readMeta(dir))?.graph).toBe(graph);
  return dir;
}

const graphFiles = async (dir: string) => (await readdir(dir)).filter((f) => f.startsWith('graph.')).sort();

// Every graph database is opened by child processes: a process may load only one (src/ops/graphCopy.ts).
describe('memcore migrate --graph', () => {
  it('moves a folder from Kuzu to LadybugDB and back with nothing lost', async () => {
    const dir = await folderWith('kuzu');
    const before = (await contents(dir)) as { doc: MemoryDocumentRecord; bundle: { entries: unknown[] } };
    // the fixture reached the graph whole: every relation type, both golden paths, the feedback
    expect(new Set(before.doc.relations!.map((r) => r.type))).toEqual(
      new Set(['SUPERSEDES', 'DEPENDS_ON', 'RELATED', 'REFERENCES_CODE', 'IMPLEMENTS']),
    );
    expect(before.doc.golden_paths!.map((p) => p.steps?.length ?? 0).sort()).toEqual([0, 3]);
    expect(before.doc.feedback).toHaveLength(2);
    expect(before.bundle.entries.length).toBeGreaterThan(0);

    for (const [from, to] of [
      ['kuzu', 'ladybug'],
      ['ladybug', 'kuzu'],
    ] as const) {
      const r = await memcore(['migrate', '--db', dir, '--graph', to, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        from,
        to,
        migrated: true,
        counts: {
          entries: 5,
          codeLocations: 3,
          goldenPaths: 2,
          relations: { RELATED: 2, DEPENDS_ON: 2, SUPERSEDES: 1, REFERENCES_CODE: 2, IMPLEMENTS: 1, PATH_STEP: 3 },
        },
      });
      expect((await readMeta(dir))?.graph).toBe(to);
      expect(await graphFiles(dir)).toEqual([graphFileName(to)]);
      expect(await contents(dir)).toEqual(before);
    }
    // Already there: nothing to do, nothing changed.
    const again = await memcore(['migrate', '--db', dir, '--graph', 'kuzu']);
    expect([again.code, again.stdout]).toEqual([0, `${dir} is kept in kuzu already; nothing to do\n`]);
    expect(await contents(dir)).toEqual(before);
  }, 180_000);

  it('refuses bad command lines, missing folders and folders in use, changing nothing', async () => {
    const dir = await folderWith('kuzu');
    const noGraph = await memcore(['migrate', '--db', dir]);
    expect(noGraph.code).toBe(2);
    expect(noGraph.stderr).toMatch(/migrate needs --graph ladybug\|kuzu/);
    const badGraph = await memcore(['migrate', '--db', dir, '--graph', 'neo4j', '--json']);
    expect(badGraph.code).toBe(2);
    expect(JSON.parse(badGraph.stdout)).toMatchObject({ error: { code: 'USAGE', message: expect.stringContaining('got "neo4j"') } });
    const missing = await memcore(['migrate', '--db', join(dir, 'nothing-here'), '--graph', 'ladybug']);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/is not a memcore database folder/);
    expect(existsSync(join(dir, 'nothing-here'))).toBe(false);

    // Another process holding the folder keeps it as it is.
    const holder = spawn(process.execPath, scriptArgs(folderTool, ['hold', dir]), { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
      const busy = await memcore(['migrate', '--db', dir, '--graph', 'ladybug']);
      expect(busy.code).toBe(6);
      expect(busy.stderr).toMatch(/open in another process/);
    } finally {
      holder.kill('SIGKILL');
    }
    expect((await readMeta(dir))?.graph).toBe('kuzu');
    // (the holder, killed, left its write-ahead log)
    expect((await graphFiles(dir)).filter((f) => !f.endsWith('.wal'))).toEqual(['graph.kuzu']);
  }, 180_000);

  it('leaves a folder that opens with everything in it when killed -9 at any point', async () => {
    const dir = await folderWith('kuzu');
    const before = await contents(dir);
    // Killed as soon as the new graph file appears, then after growing delays: before, during and
    // after the write and the swap. Each time the folder opens, on the database meta.json names, whole.
    const kills: ('building' | number)[] = ['building', 400, 1_200, 2_000, 3_000, 4_500];
    for (const [i, when] of kills.entries()) {
      const to = (await readMeta(dir))!.graph === 'kuzu' ? 'ladybug' : 'kuzu';
      const child = spawn(process.execPath, nodeArgs(['migrate', '--db', dir, '--graph', to]), { stdio: 'ignore' });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      if (when === 'building') {
        while (child.exitCode === null && !(await readdir(dir)).some((f) => f.includes('.migrating')))
          await new Promise((r) => setTimeout(r, 5));
      } else await new Promise((r) => setTimeout(r, when));
      child.kill('SIGKILL');
      await exited;
      const graph = (await readMeta(dir))!.graph!;
      expect(existsSync(join(dir, graphFileName(graph))), `after kill ${i}, meta.json names ${graph}`).toBe(true);
      expect(await contents(dir)).toEqual(before);
    }
    // A run to the end cleans up what the killed ones left.
    const last = (await readMeta(dir))!.graph === 'kuzu' ? 'ladybug' : 'kuzu';
    expect((await memcore(['migrate', '--db', dir, '--graph', last])).code).toBe(0);
    expect(await graphFiles(dir)).toEqual([graphFileName(last)]);
    expect(await contents(dir)).toEqual(before);
  }, 400_000);
});

describe('a Kuzu folder where the kuzu package is not installed', () => {
  it('is refused with the package to install, while LadybugDB folders work', async () => {
    const kuzuDir = await folderWith('kuzu');
    // The package made unresolvable for the child process, as on an install without it.
    const hideKuzu = fileURLToPath(new URL('./fixtures/hideKuzu.mjs', import.meta.url));
    // MEMCORE_GRAPH: a new folder on LadybugDB whatever the default (config/defaults.ts) is.
    const withoutKuzu = (args: string[]) =>
      run(['--import', hideKuzu, ...nodeArgs(args)], { MEMCORE_EMBEDDER: 'local', MEMCORE_GRAPH: 'ladybug' });
    const refused = await withoutKuzu(['migrate', '--graph', 'ladybug', '--db', kuzuDir]);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/graph is a Kuzu database, and the package kuzu that opens it is not installed: run `npm install kuzu`/);
    const fileDir = await tempDir();
    const memoryFile = join(fileDir, 'memory.yaml');
    await writeFile(memoryFile, MEMORY);
    const ladybugDir = join(fileDir, 'db');
    const ingested = await withoutKuzu(['ingest', memoryFile, '--db', ladybugDir]);
    expect(ingested.code, ingested.stderr).toBe(0);
    expect((await readMeta(ladybugDir))?.graph).toBe('ladybug');
  }, 180_000);
});
