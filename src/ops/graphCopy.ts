/**
 * The copy of a graph into another graph database, for migrateGraph.ts: what is copied, and the
 * process that writes it. The new graph is written by a process of its own because Kuzu and
 * LadybugDB cannot be loaded in one process: both bundle ANTLR, whose shared static objects are
 * destroyed twice when such a process exits (SIGSEGV, measured with kuzu 0.11.3 and
 * @ladybugdb/core 0.19.1). So the migrating process loads only the old database, this one only the
 * new.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MemcoreError } from '../model/errors.js';
import type { CodeLocation, GoldenPath, Relation } from '../model/types.js';
import type { EntryNode, GraphBatch, GraphCounts, GraphStore } from '../store/graph/graphStore.js';
import { openGraphDriver, type GraphDriverName } from '../store/graph/drivers.js';

/** Every record of a graph, each list in a fixed order: what a migration copies and then compares. */
export interface GraphContents {
  entries: EntryNode[];
  codeLocations: CodeLocation[];
  goldenPaths: GoldenPath[];
  relations: Relation[];
}

export async function graphContents(
  graph: Pick<GraphStore, 'entryNodes' | 'allCodeLocations' | 'allGoldenPaths' | 'allRelations'>,
): Promise<GraphContents> {
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const byId = <T extends { id: string }>(rows: T[]) => rows.sort((a, b) => order(a.id, b.id));
  const relationKey = (r: Relation) => `${r.type}\u0000${r.from}\u0000${r.to}`;
  const goldenPaths = byId(await graph.allGoldenPaths());
  for (const p of goldenPaths) p.steps.sort((a, b) => a.order - b.order || order(a.code.id, b.code.id));
  return {
    entries: byId(await graph.entryNodes()),
    codeLocations: byId(await graph.allCodeLocations()),
    goldenPaths,
    relations: (await graph.allRelations()).sort((a, b) => order(relationKey(a), relationKey(b))),
  };
}

/** The write that recreates `contents` in an empty graph: golden path steps become PATH_STEP relations again. */
export function batchOf(contents: GraphContents): GraphBatch {
  const steps = (p: GoldenPath): Relation[] =>
    p.steps.map((s) => ({
      type: 'PATH_STEP',
      from: p.id,
      to: s.code.id,
      stepOrder: s.order,
      ...(s.description !== null ? { description: s.description } : {}),
      keyConcepts: s.keyConcepts,
    }));
  return {
    entries: contents.entries,
    codeLocations: contents.codeLocations,
    goldenPaths: contents.goldenPaths.map(({ id, name, concept, description }) => ({ id, name, concept, description })),
    relations: [...contents.relations, ...contents.goldenPaths.flatMap(steps)],
  };
}

interface WriteRequest {
  driver: GraphDriverName;
  file: string;
  contents: GraphContents;
}
type WriteAnswer = { ok: true; contents: GraphContents; counts: GraphCounts } | { ok: false; message: string };

/**
 * Writes `contents` into a new graph file with `driver` in a child process, and answers what the
 * new file holds, read back. Ends the child with this process (an IPC channel it watches).
 */
export function writeGraphInChild(
  driver: GraphDriverName,
  file: string,
  contents: GraphContents,
): Promise<{ contents: GraphContents; counts: GraphCounts }> {
  const entry = fileURLToPath(new URL(`./graphWriter${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));
  // From a checkout the code is TypeScript, run through tsx as this process is.
  const execArgv = entry.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [];
  return new Promise((resolve, reject) => {
    const child = fork(entry, [], { execArgv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
    let stderr = '';
    let answer: WriteAnswer | undefined;
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('message', (m) => (answer = m as WriteAnswer));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (answer?.ok) resolve({ contents: answer.contents, counts: answer.counts });
      else
        reject(
          new MemcoreError(
            answer
              ? answer.message
              : `the process writing ${file} ended (${signal ?? `exit ${code}`}) before it answered: ${stderr.trim().split('\n').at(-1) ?? ''}`,
            'STORE',
          ),
        );
    });
    child.send({ driver, file, contents } satisfies WriteRequest);
  });
}

/** The child's side (graphWriter.ts): one request, one answer, then exit. */
export function serveGraphWrite(): void {
  // The migrating process died: what was being written is of no use to anyone.
  process.once('disconnect', () => process.exit(1));
  process.once('message', (m) => {
    const { driver, file, contents } = m as WriteRequest;
    const reply = (answer: WriteAnswer) => process.send!(answer, () => process.disconnect());
    void (async () => {
      const graph = await openGraphDriver(driver, file);
      try {
        await graph.write(batchOf(contents));
        await graph.checkpoint();
        return { ok: true as const, contents: await graphContents(graph), counts: await graph.counts() };
      } finally {
        await graph.close();
      }
    })().then(reply, (e: unknown) => reply({ ok: false, message: (e as Error).message }));
  });
}
