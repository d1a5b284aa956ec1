/**
 * The JSON API under `/api/` that the memory page reads. Read-only. Searches, contexts, golden
 * paths and the status run through the MCP tools (their schemas validate the input), everything
 * else through the engine's public reads, so the page is served by the query path the library,
 * the CLI and agents use, and no read here can return a secret entry: each read leaves them out.
 */
import { describeReason } from '../format/formatBundle.js';
import { formatContext } from '../format/formatContext.js';
import { estimateTokens } from '../retrieve/score.js';
import type { EntryGraph } from '../engine/entryGraph.js';
import type { EntryDetails } from '../engine/entryDetails.js';
import type { MemoryEngine, SearchHit } from '../engine/memoryEngine.js';
import { invalidInput, MemcoreError } from '../model/errors.js';
import { idProblem } from '../model/ids.js';
import type { ContextBundle, GoldenPath, MemoryEntry } from '../model/types.js';
import { checkToolInput, statusTool, TOOLS, type ServerStatus } from '../server/tools.js';
import type { GapGroup } from '../feedback/gapLog.js';
import type { ContextView, SearchHitView } from './apiTypes.js';

export type { ContextView, SearchHitView };

export interface EntryView extends EntryDetails {
  /** Titles of the entries its links name. */
  titles: Record<string, string>;
  /** Its rating from feedback, when it has been rated. */
  effectiveness: { value: number; signals: number } | null;
}

export interface StatusView {
  stats: Record<string, unknown>;
  feedback: { id: string; title: string | null; value: number; signals: number }[];
  gaps: GapGroup[];
}

type Params = URLSearchParams;

/** The API's answer: an HTTP status and a JSON body. */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

function allowOnly(params: Params, names: readonly string[]): void {
  for (const key of new Set(params.keys())) {
    if (!names.includes(key)) throw invalidInput(`${key}: is not a known parameter (known: ${names.join(', ') || 'none'})`);
  }
}

function one(params: Params, name: string): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw invalidInput(`${name}: give it once`);
  return all[0];
}

function integer(params: Params, name: string): number | undefined {
  const v = one(params, name);
  if (v === undefined || v === '') return undefined;
  if (!/^-?\d{1,9}$/.test(v)) throw invalidInput(`${name}: must be a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
}

function flag(params: Params, name: string): boolean | undefined {
  const v = one(params, name);
  if (v === undefined || v === '') return undefined;
  if (v !== 'true' && v !== 'false') throw invalidInput(`${name}: must be true or false, got ${JSON.stringify(v)}`);
  return v === 'true';
}

function listOf(params: Params, name: string): string[] | undefined {
  const all = params.getAll(name).filter((v) => v !== '');
  return all.length > 0 ? all : undefined;
}

function entryId(raw: string): string {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw invalidInput('the entry id in the address is not valid percent-encoding');
  }
  const problem = idProblem(id);
  if (problem) throw invalidInput(`id: ${problem}`);
  return id;
}

const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

async function runTool(engine: MemoryEngine, name: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const tool = TOOLS.find((t) => t.name === name)!;
  return (await tool.run(engine, checkToolInput(tool, defined(input)))).structured;
}

const hitView = (h: SearchHit): SearchHitView => ({
  id: h.entry.id,
  title: h.entry.title,
  entryType: h.entry.entryType,
  coreId: h.entry.coreId,
  score: h.score,
  why: h.why.map(describeReason),
});

async function search(engine: MemoryEngine, params: Params): Promise<{ hits: SearchHitView[]; notes: string[] }> {
  allowOnly(params, ['q', 'mode', 'core', 'type', 'limit']);
  const query = one(params, 'q') ?? '';
  if (query.trim() === '') return { hits: [], notes: [] };
  const answer = await runTool(engine, 'search_memory', {
    query,
    mode: one(params, 'mode') || undefined,
    cores: listOf(params, 'core'),
    entry_types: listOf(params, 'type'),
    limit: integer(params, 'limit'),
  });
  return { hits: (answer.hits as SearchHit[]).map(hitView), notes: answer.notes as string[] };
}

async function entry(engine: MemoryEngine, id: string): Promise<EntryView> {
  const details = await engine.entryDetails(id);
  if (!details) throw new MemcoreError(`no entry with id "${id}"`, 'NOT_FOUND');
  const others = [...new Set(details.links.flatMap((l) => [l.from, l.to]).concat(details.supersededBy ?? []))].filter((o) => o !== id);
  const titles = Object.fromEntries((await engine.getEntries(others)).map((e) => [e.id, e.title]));
  const rated = (await engine.effectivenessReport()).entries.find((e) => e.id === id);
  return { ...details, titles, effectiveness: rated ? { value: rated.value, signals: rated.signals } : null };
}

async function graph(engine: MemoryEngine, params: Params): Promise<EntryGraph> {
  allowOnly(params, ['focus', 'depth', 'core', 'max']);
  const focus = one(params, 'focus');
  const core = one(params, 'core');
  const maxNodes = integer(params, 'max');
  if ((focus === undefined) === (core === undefined)) throw invalidInput('give either focus (an entry id) or core');
  if (focus !== undefined) {
    const depth = integer(params, 'depth');
    return engine.entryGraph({
      focus: entryId(focus),
      ...(depth !== undefined ? { depth } : {}),
      ...(maxNodes !== undefined ? { maxNodes } : {}),
    });
  }
  if (params.has('depth')) throw invalidInput('depth goes with focus');
  return engine.entryGraph({ core: core!, ...(maxNodes !== undefined ? { maxNodes } : {}) });
}

async function context(engine: MemoryEngine, params: Params): Promise<ContextView> {
  allowOnly(params, ['task', 'core', 'type', 'max_entries', 'max_tokens', 'depth', 'include_code']);
  const task = one(params, 'task') ?? '';
  const bundle = (await runTool(engine, 'build_task_context', {
    task,
    cores: listOf(params, 'core'),
    entry_types: listOf(params, 'type'),
    max_entries: integer(params, 'max_entries'),
    max_tokens: integer(params, 'max_tokens'),
    depth: integer(params, 'depth'),
    include_code: flag(params, 'include_code'),
  })) as unknown as ContextBundle;
  const block = formatContext(bundle, { style: 'prompt' });
  const items = bundle.entries.map((s) => ({
    id: s.entry.id,
    title: s.entry.title,
    entryType: s.entry.entryType,
    coreId: s.entry.coreId,
    score: s.score,
    tokens: s.tokens,
    why: s.why.map(describeReason),
    possiblyStale: s.possiblyStale === true,
  }));
  return {
    block,
    bundleId: bundle.bundleId ?? null,
    items,
    totalTokens: items.reduce((sum, i) => sum + i.tokens, 0),
    blockTokens: estimateTokens(block),
    lowConfidence: bundle.lowConfidence === true,
    notes: bundle.notes,
  };
}

async function status(engine: MemoryEngine, server: ServerStatus): Promise<StatusView> {
  const stats = (await statusTool(server).run(engine, {})).structured;
  const rated = (await engine.effectivenessReport()).entries;
  const titles = new Map((await engine.getEntries(rated.map((r) => r.id))).map((e: MemoryEntry) => [e.id, e.title]));
  // A rated entry the page may not name (a secret one) is left out, as every read leaves it out.
  const feedback = rated.filter((r) => titles.has(r.id)).map((r) => ({ ...r, title: titles.get(r.id) ?? null }));
  return { stats, feedback, gaps: await engine.gaps() };
}

/** Answers one `/api/...` request; `path` is the part after `/api`. */
export async function answerApi(engine: MemoryEngine, server: ServerStatus, path: string, params: Params): Promise<ApiAnswer> {
  try {
    if (path === '/search') return { status: 200, body: await search(engine, params) };
    if (path.startsWith('/entry/')) {
      allowOnly(params, []);
      return { status: 200, body: await entry(engine, entryId(path.slice('/entry/'.length))) };
    }
    if (path === '/graph') return { status: 200, body: await graph(engine, params) };
    if (path.startsWith('/paths/')) {
      allowOnly(params, []);
      return {
        status: 200,
        body: (await runTool(engine, 'get_golden_path', { id: entryId(path.slice('/paths/'.length)) })) as unknown as GoldenPath,
      };
    }
    if (path === '/context') return { status: 200, body: await context(engine, params) };
    if (path === '/status') {
      allowOnly(params, []);
      return { status: 200, body: await status(engine, server) };
    }
    return { status: 404, body: { error: { code: 'NOT_FOUND', message: `no API route ${path}; see docs/web.md` } } };
  } catch (e) {
    const code = e instanceof MemcoreError ? e.code : 'FAILURE';
    const httpStatus = code === 'NOT_FOUND' ? 404 : code === 'INVALID_INPUT' ? 400 : 500;
    return { status: httpStatus, body: { error: { code, message: (e as Error).message.split('\n')[0] } } };
  }
}
