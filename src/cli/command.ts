/**
 * What every command shares: exit codes, the command contract, option tables and value parsers,
 * and the lines that several commands print.
 */
import { type ParseArgsConfig } from 'node:util';
import type { MemoryEngine } from '../engine/memoryEngine.js';
import type { SyncReport } from '../ingest/syncSource.js';
import { MemcoreError } from '../model/errors.js';
import {
  CONFIDENCE_LEVELS,
  ENTRY_EDGE_TYPES,
  SENSITIVITY_LEVELS,
  type Confidence,
  type EntryEdgeType,
  type MemoryEntry,
} from '../model/types.js';
import type { TaskContextOptions } from '../retrieve/taskContext.js';

export const EXIT = { ok: 0, failure: 1, usage: 2, invalid: 3, notFound: 4, mismatch: 5, store: 6, stale: 7 } as const;

export class UsageError extends Error {}

export const COMMON = {
  db: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

export const FILTERS = {
  core: { type: 'string', multiple: true },
  type: { type: 'string', multiple: true },
  tag: { type: 'string', multiple: true },
  'min-confidence': { type: 'string' },
  'min-importance': { type: 'string' },
  'created-after': { type: 'string' },
  'created-before': { type: 'string' },
  threshold: { type: 'string' },
  'as-of': { type: 'string' },
  'include-secret': { type: 'boolean', default: false },
} as const satisfies ParseArgsConfig['options'];

/** `--include-secret`: secrets are left out of every read unless the command line asks for them. */
export const INCLUDE_SECRET = { 'include-secret': { type: 'boolean', default: false } } as const satisfies ParseArgsConfig['options'];
export const sensitivityOf = (v: Record<string, unknown>) => (v['include-secret'] ? { sensitivity: [...SENSITIVITY_LEVELS] } : {});

export const CONTEXT_OPTIONS = {
  ...FILTERS,
  depth: { type: 'string' },
  relations: { type: 'string' },
  'max-entries': { type: 'string' },
  'max-tokens': { type: 'string' },
  'project-core': { type: 'string' },
  seeds: { type: 'string' },
  candidates: { type: 'string' },
  diversity: { type: 'string' },
  'no-keyword': { type: 'boolean', default: false },
  'no-mentions': { type: 'boolean', default: false },
  'graph-ranking': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

export function relationList(v: unknown): EntryEdgeType[] | undefined {
  if (typeof v !== 'string') return undefined;
  const list = v.split(',').map((s) => s.trim());
  for (const r of list)
    if (!ENTRY_EDGE_TYPES.includes(r as EntryEdgeType))
      throw new UsageError(`--relations takes ${ENTRY_EDGE_TYPES.join(', ')}; got "${r}"`);
  return list as EntryEdgeType[];
}

export function contextOptions(v: Record<string, unknown>): TaskContextOptions {
  const relationTypes = relationList(v.relations);
  const ranking = v['graph-ranking'];
  if (ranking !== undefined && ranking !== 'pagerank' && ranking !== 'proximity')
    throw new UsageError(`--graph-ranking must be pagerank or proximity, got "${String(ranking)}"`);
  const opt = (name: string, parse: (n: string, s: string) => number | undefined) =>
    v[name] !== undefined ? parse(name, v[name] as string) : undefined;
  const numbers = {
    depth: opt('depth', int),
    maxEntries: opt('max-entries', int),
    maxTokens: opt('max-tokens', int),
    seeds: opt('seeds', int),
    candidates: opt('candidates', int),
    diversity: opt('diversity', num),
  };
  return {
    ...filterOptions(v as FilterValues),
    ...Object.fromEntries(Object.entries(numbers).filter(([, n]) => n !== undefined)),
    ...(relationTypes ? { relationTypes } : {}),
    ...(typeof v['project-core'] === 'string' ? { projectCore: v['project-core'] } : {}),
    ...(v['no-keyword'] ? { keyword: false } : {}),
    ...(v['no-mentions'] ? { mentions: false } : {}),
    ...(ranking ? { graphRanking: ranking } : {}),
  };
}

/** What a sync removed and kept, in a few words. */
export function syncLine(s: SyncReport): string {
  const { entries, codeLocations, goldenPaths, relations } = s.removed;
  return (
    `removed ${entries} entries, ${codeLocations} code locations, ${goldenPaths} golden paths, ${relations} relations` +
    (s.expired.length > 0 ? `; expired ${s.expired.length} still depended on (${s.expired.join(', ')})` : '') +
    (s.keptInUse.length > 0 ? `; kept ${s.keptInUse.length} code locations still referenced` : '')
  );
}

export function listLine(i: number, score: number, e: MemoryEntry): string {
  return `${String(i + 1).padStart(2)}. ${score.toFixed(3)}  [${e.entryType}] ${e.title}  (${e.coreId}, id ${e.id})`;
}

export function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, got "${v}"`);
  return Number(v);
}

export function num(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got "${v}"`);
  return n;
}

export function date(name: string, v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) throw new UsageError(`--${name} must be an ISO date, got "${v}"`);
  return new Date(ms);
}

export interface FilterValues {
  core?: string[];
  type?: string[];
  tag?: string[];
  'min-confidence'?: string;
  'min-importance'?: string;
  'created-after'?: string;
  'created-before'?: string;
  threshold?: string;
  'as-of'?: string;
  'include-secret'?: boolean;
}

export function filterOptions(v: FilterValues) {
  const minConfidence = v['min-confidence'];
  if (minConfidence !== undefined && !CONFIDENCE_LEVELS.includes(minConfidence as Confidence)) {
    throw new UsageError(`--min-confidence must be one of ${CONFIDENCE_LEVELS.join(', ')}, got "${minConfidence}"`);
  }
  return {
    ...(v.core ? { cores: v.core } : {}),
    ...(v.type ? { entryTypes: v.type } : {}),
    ...(v.tag ? { tags: v.tag } : {}),
    ...(minConfidence ? { minConfidence: minConfidence as Confidence } : {}),
    ...(v.threshold !== undefined ? { threshold: num('threshold', v.threshold) } : {}),
    ...(v['as-of'] !== undefined ? { asOf: date('as-of', v['as-of']) } : {}),
    ...(v['min-importance'] !== undefined ? { minImportance: int('min-importance', v['min-importance']) } : {}),
    ...(v['created-after'] !== undefined ? { createdAfter: date('created-after', v['created-after']) } : {}),
    ...(v['created-before'] !== undefined ? { createdBefore: date('created-before', v['created-before']) } : {}),
    ...sensitivityOf(v as Record<string, unknown>),
  };
}

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  isTTY: boolean;
}

/** Where a command runs: `cwd` resolves file arguments (a CLI call served by the owner comes from another directory). */
export interface CommandContext {
  engine: () => Promise<MemoryEngine>;
  /** The command runs inside the process that owns the folder (`memcore serve`, `mcp`). */
  served: boolean;
  cwd: string;
  /** The database folder the command line names (resolved). */
  dir: string;
  /** Runs another command line in this process: a server answers the CLI calls it is sent with it. */
  runCli: (argv: string[], io: Io, context: { engine?: MemoryEngine; cwd?: string }) => Promise<number>;
}

export type Handler = (context: CommandContext, positionals: string[], values: Record<string, unknown>, io: Io) => Promise<number>;

export interface Command {
  options: ParseArgsConfig['options'];
  /** [min, max] positionals. */
  args: [number, number];
  /**
   * What it asks of the database: nothing (runs here), reads (refused on a folder with no memory),
   * or writes (creates the database). Reads and writes go through the folder's owner when one runs.
   */
  uses: 'nothing' | 'reads' | 'writes';
  run: Handler;
}

export const print = (io: Io, json: boolean, value: unknown, text: () => string) => io.out(json ? JSON.stringify(value, null, 2) : text());

export const isUsageError = (e: unknown) => e instanceof UsageError || !!(e as { code?: string }).code?.startsWith?.('ERR_PARSE_ARGS');

export function exitCodeOf(e: unknown): number {
  if (isUsageError(e)) return EXIT.usage;
  if (e instanceof MemcoreError) {
    if (e.code === 'INVALID_INPUT' || e.code === 'INVALID_FILE') return EXIT.invalid;
    if (e.code === 'NOT_FOUND') return EXIT.notFound;
    if (e.code === 'MODEL_MISMATCH') return EXIT.mismatch;
    if (e.code === 'STORE') return EXIT.store;
  }
  return EXIT.failure;
}
