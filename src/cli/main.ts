#!/usr/bin/env node
/**
 * memcore command line. Exit codes (stable, for scripts):
 *   0 success · 1 unexpected failure · 2 bad command line · 3 invalid input (file, option or
 *   value) · 4 not found · 5 database mismatch (other embedding model) · 6 store failure (a store
 *   damaged, missing, or not writable: a full or read-only disk)
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { codeSpan, describeReason } from '../format/formatBundle.js';
import { formatContext, type ContextStyle } from '../format/formatContext.js';
import { describeConfig, resolveConfig } from '../config/config.js';
import type { EvalFile } from '../eval/evalFile.js';
import type { Strategy } from '../eval/runEval.js';
import { MemcoreError } from '../model/errors.js';
import {
  CONFIDENCE_LEVELS,
  ENTRY_EDGE_TYPES,
  SENSITIVITY_LEVELS,
  type Confidence,
  type ContextBundle,
  type EntryEdgeType,
  type MemoryEntry,
} from '../model/types.js';
import type { EmbedderConfig, MemoryEngine, OpenMemoryOptions, SearchHit } from '../engine/memoryEngine.js';
import type { TaskContextOptions } from '../retrieve/taskContext.js';
import { PRESET_NAMES, type PresetName } from '../recipe/searchRecipe.js';
import { presetOptions } from '../recipe/presets.js';
import { SCORE_COMBINATIONS, type ScoreCombination } from '../retrieve/score.js';
import { connectToOwner, PROTOCOL, readLines, type CliMessage, type PageLogin } from '../server/controlSocket.js';
import type { Owner, OwnerOptions } from '../server/owner.js';
import type { DoctorReport } from '../ops/doctor.js';
import type { SyncReport } from '../ingest/syncSource.js';
import { entryText, formatGoldenPath } from '../format/formatBundle.js';

// The engine, the eval harness and the MCP server load native stores, models and schemas (~0.9 s);
// a CLI call that a running server answers needs none of them, so they are imported when used.
const openMemory = async (options: OpenMemoryOptions) => (await import('../engine/memoryEngine.js')).openMemory(options);
const startOwner = async (engine: MemoryEngine, options: OwnerOptions) => (await import('../server/owner.js')).startOwner(engine, options);

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export const EXIT = { ok: 0, failure: 1, usage: 2, invalid: 3, notFound: 4, mismatch: 5, store: 6, stale: 7 } as const;

class UsageError extends Error {}

const COMMON = {
  db: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

const FILTERS = {
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
const INCLUDE_SECRET = { 'include-secret': { type: 'boolean', default: false } } as const satisfies ParseArgsConfig['options'];
const sensitivityOf = (v: Record<string, unknown>) => (v['include-secret'] ? { sensitivity: [...SENSITIVITY_LEVELS] } : {});

const CONTEXT_OPTIONS = {
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

function relationList(v: unknown): EntryEdgeType[] | undefined {
  if (typeof v !== 'string') return undefined;
  const list = v.split(',').map((s) => s.trim());
  for (const r of list)
    if (!ENTRY_EDGE_TYPES.includes(r as EntryEdgeType))
      throw new UsageError(`--relations takes ${ENTRY_EDGE_TYPES.join(', ')}; got "${r}"`);
  return list as EntryEdgeType[];
}

function contextOptions(v: Record<string, unknown>): TaskContextOptions {
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

function listLine(i: number, score: number, e: MemoryEntry): string {
  return `${String(i + 1).padStart(2)}. ${score.toFixed(3)}  [${e.entryType}] ${e.title}  (${e.coreId}, id ${e.id})`;
}

export const USAGE = `memcore — project memory for AI agents (LanceDB + Kuzu)

Usage: memcore <command> [options]

Commands:
  ingest <file>...          upsert memory files (.json, .jsonl, .yaml); all or nothing per file
                            --auto-link: link entries that mention titles, aliases, code symbols or paths
                            --sync: make the store match each file: what the file held before and no
                            longer does is removed (expired if other entries depend on it)
                            --repo <dir> (default config repo): fingerprint code locations from the
                            text they point at there, so check tells moved from drifted code
  import <path>...          import markdown (files, or folders walked with .gitignore): a heading section
                            per entry; ADR folders give decisions, CLAUDE.md/AGENTS.md/.cursor/rules give
                            conventions; re-import updates and removes to match (--core, --type,
                            --no-conventions, --no-auto-link); exit 3 when a document was skipped
  import-code <repo> --codebase <id>  code locations for every function, class, method, interface, type
                            and enum of the TypeScript/JavaScript files (walked with .gitignore), with
                            lines, kind and a fingerprint; unchanged files are skipped by hash; entries
                            that name a symbol or path are linked to it (--no-auto-link)
  check                     every code location against the repository (--repo, default config repo or
                            the working directory; --codebase): fresh, moved, drifted or orphaned, with
                            the entries that reference each; --fix re-anchors moved ones;
                            --fail-on moved|drifted|orphaned exits 7 when any is found (for CI)
  context "<task>"          the context an agent needs before the task (full pipeline)
  context --diff [<range>]  the context for a change: git diff of the working tree, of a range
                            (main..HEAD, HEAD~3) or of the index (--staged) in --repo (default config
                            repo or the working directory); entries on the changed code come first
  search "<query>"          search entries (--mode hybrid | semantic | matryoshka | keyword | find | context)
  find "<query>"            search seeds expanded through the graph, scored (no code)
  traverse <id>             entries reachable from an entry (--depth, --relations, --direction)
  code-refs                 entries that reference code (--file, --symbol, --codebase)
  related-to-code <file> "<query>"  entries referencing a file, ranked by the query
  golden-path <id>          a golden path with its ordered steps
  golden-paths <concept>... golden paths about any of the concepts
  list                      entries in effect (--core, --type, --tag, --as-of, --limit, --offset)
  show <id>                 an entry with its links, code references and what supersedes it
  export                    the memory as a memory file: --format yaml (default) | jsonl | json, --core,
                            --include-secret, --out <file> (default stdout); memcore ingest reads it back
  backup <dest>             a consistent copy of the folder, with checksums (writes wait, reads go on)
  restore <src>             check a backup and put it in place of --db (--force to replace a non-empty folder)
  doctor                    check the folder part by part; --repair rebuilds what can be derived
                            (exit 0 healthy, 6 not; while served, the server checks its open stores
                            and what it holds in memory; --repair needs the server stopped)
  reembed --embedder <e>    move the folder to another model: local, or openai:<model> with --dimensions
                            (--base-url, --truncatable); built beside it, resumable, swapped in at the end
  core-memory <core>        a core's most important entries as a <memory> block (--max-tokens, default 2000)
  delete <id>...            remove entries (and their edges)
  index                     build indexes and refit the small-vector projection
  feedback <id> --useful | --not-useful | --score <0..1>  rate an entry (--bundle <id>: once per bundle;
                            --note; --task: what it was rated for, default the bundle's); it moves the
                            entry's rank most for tasks like it. --report: every rated entry, source and core
  gaps                      tasks memory could not answer (empty or low-confidence bundles), similar ones
                            grouped: the lessons nobody has written yet (--since <date>, --json)
  stats                     what the database holds
  config                    the effective configuration and where each setting came from
  eval <file|dataset>       retrieval quality: an eval file, or 2wiki | hotpotqa | locomo | scifact
  serve                     own the folder: keep it warm, serve MCP over HTTP and every CLI call and agent
                            (--port, default 7077; --host, default 127.0.0.1; --allow-remote; --no-http)
  mcp                       MCP over stdio for an agent's config; relays to the folder's server, or becomes it
  ui                        print an address of the memory page that signs a browser in (once, within
                            10 minutes); starts a server in the background if none owns the folder
                            (--port, default a free one; its log goes to <db>/server.log)

While a server owns the folder (serve, or a first mcp), every other command runs through it.

Common options:
  --db <dir>                database folder (default MEMCORE_DB, a config file's db, or ./.memcore)
  --json                    machine-readable output on stdout
  -h, --help                help for a command

Filters (context, search):
  --core <id>               only this memory core (repeatable)
  --type <entry_type>       only this entry type (repeatable)
  --tag <tag>               entries with this tag (repeatable)
  --min-confidence <level>  low | medium | high
  --threshold <similarity>  minimum cosine similarity, -1..1
  --as-of <date>            answer as the memory stood at an ISO date (entries in effect then)
  --min-importance <1..10>  at least this importance
  --created-after <date>    entries created at or after an ISO date
  --created-before <date>   entries created before an ISO date
  --include-secret          secret entries too (left out of every read by default; also list, show,
                            traverse, code-refs, related-to-code)

context and find options:
  --depth <n>               graph hops from the seeds (default 2, 0 = none)
  --relations <types>       comma list of RELATED,DEPENDS_ON,SUPERSEDES (default RELATED,DEPENDS_ON)
  --max-entries <n>         default 12
  --max-tokens <n>          token budget for entry text
  --project-core <id>       core always searched besides --core
  --seeds <n>               hits that seed the graph expansion (default 4)
  --candidates <n>          stage-1 over-retrieval (default 100)
  --diversity <0..1>        MMR diversity (default 0)
  --graph-ranking <r>       pagerank (default) or proximity: how graph evidence counts
  --no-keyword              vectors only
  --no-mentions             do not seed from entries whose title or alias the task names
  --no-code                 leave out code references and golden paths (context)
  --llm                     let the configured LLM keep what matters (context; falls back to top-N)
  --max-select <n>          entries the LLM keeps at most (default 10)
  --format <style>          text (default), prompt (<memory> block), markdown or json (context)

search options:
  --mode <preset>           hybrid (default), semantic, matryoshka, keyword, find or context (docs/api.md)
  --limit <n>               default 10
  --candidates <n>          stage-1 candidates (default: matryoshka measured on the store, 600-10000; hybrid 100)
  --fusion <weighted|rrf>   hybrid fusion (default weighted, vector 0.3 : keyword 1)
  --mentions                hybrid: also fuse in entries whose title or alias the query names

eval options:
  --strategies <list>       vector,matryoshka,keyword,hybrid,graph,graph-ppr,context (default all)
  --k <list>                cut-offs, e.g. 2,5,8,10 (default: the dataset's published ones, else 2,5,8,10,25,50)
  --data <dir>              dataset folder (default ../shared/eval-data/<dataset>)
  --split <name>            scifact qrels split (default train)
  --auto-link / --no-auto-link   mention links at ingest (default on for 2wiki and hotpotqa)
  --limit-queries <n>       the first n queries only (smoke runs)
  --out <file>              also write the JSON report there
  --report <file.html>      also write an HTML report (one offline file): recall and all-gold@k curves
                            per strategy, every metric, and each strategy's misses (at the k nearest 10
                            unless --misses says)
  --save-eval-file <file>   write the eval file an adapter built
  --keep-db <dir>           ingest into this folder and keep it; a re-run embeds only what changed
  --score-combination <c>   the context strategy's scoreCombination: sum (default) or product
  --misses <k>              list each strategy's queries whose gold is not all in the top k, with the gold ranks
  --simulate-feedback       rate the context bundles of half of each core's queries (gold useful, the rest
                            not), then score the other half with and without the ratings (ratings stay in
                            --keep-db: use a copy)
  --peers                   also score LanceDB (flat vector, FTS, RRF hybrid) and Orama (hybrid, vector,
                            full-text) on the same entries and vectors (needs a clone's devDependencies)

traverse options: --depth <n> (default 2), --relations <types>, --direction outgoing|incoming|both
index options: --ann-min-rows <n> (ANN index on vector_small from this many entries; default 50000)

Exit codes: 0 ok, 1 failure, 2 bad command line, 3 invalid input, 4 not found (also a read of a folder
with no memory), 5 database/model mismatch, 6 store failure (damaged, missing, full or read-only),
7 check found code references as stale as --fail-on.
`;

/**
 * `memcore <command> --help`: the command's lines of USAGE, the option sections that name it, the
 * common options and the exit codes.
 */
export function commandHelp(name: string): string {
  const blocks = USAGE.trimEnd().split('\n\n');
  const commands = blocks
    .find((b) => b.startsWith('Commands:'))!
    .split('\n')
    .slice(1);
  const own: string[] = [];
  for (const [i, line] of commands.entries()) {
    if (!line.startsWith(`  ${name} `) && line !== `  ${name}`) continue;
    own.push(line);
    for (const more of commands.slice(i + 1))
      if (/^ {20,}/.test(more)) own.push(more);
      else break;
  }
  const mentions = (header: string) => new RegExp(`(^|[ (,])${name}([ ,):]|$)`).test(header.split(':')[0]!);
  const sections = blocks
    .flatMap((b) =>
      b.split('\n').reduce<string[][]>((acc, line) => (/^\S/.test(line) ? acc.push([line]) : acc.at(-1)!.push(line), acc), []),
    )
    .filter((lines) => !lines[0]!.startsWith('Commands:') && !lines[0]!.startsWith('Usage:') && mentions(lines[0]!));
  return [
    `Usage: memcore ${name} [options]`,
    '',
    ...own,
    '',
    ...sections.map((l) => l.join('\n') + '\n'),
    blocks.find((b) => b.startsWith('Common options:'))!,
    '',
    blocks.find((b) => b.startsWith('Exit codes:'))!,
  ].join('\n');
}

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, got "${v}"`);
  return Number(v);
}

function num(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got "${v}"`);
  return n;
}

function date(name: string, v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) throw new UsageError(`--${name} must be an ISO date, got "${v}"`);
  return new Date(ms);
}

interface FilterValues {
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

function filterOptions(v: FilterValues) {
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

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  isTTY: boolean;
}

/** Where a command runs: `cwd` resolves file arguments (a CLI call served by the owner comes from another directory). */
interface CommandContext {
  engine: () => Promise<MemoryEngine>;
  /** The command runs inside the process that owns the folder (`memcore serve`, `mcp`). */
  served: boolean;
  cwd: string;
  /** The database folder the command line names (resolved). */
  dir: string;
}

type Handler = (context: CommandContext, positionals: string[], values: Record<string, unknown>, io: Io) => Promise<number>;

interface Command {
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

const print = (io: Io, json: boolean, value: unknown, text: () => string) => io.out(json ? JSON.stringify(value, null, 2) : text());

const COMMANDS: Record<string, Command> = {
  ingest: {
    options: { 'auto-link': { type: 'boolean', default: false }, sync: { type: 'boolean', default: false }, repo: { type: 'string' } },
    args: [1, Infinity],
    uses: 'writes',
    async run({ engine, cwd }, files, values, io) {
      const memory = await engine();
      const reports = [];
      const configured = (values.repo as string | undefined) ?? (resolveConfig({ cwd }).values.repo as string | undefined);
      const repo = configured === undefined ? undefined : resolve(cwd, configured);
      for (const [i, file] of files.entries()) {
        if (io.isTTY && !values.json) io.err(`[${i + 1}/${files.length}] ingesting ${file} …`);
        const progress = io.isTTY && !values.json ? (m: string) => io.err(`  ${file}: ${m}`) : undefined;
        const r = await memory.ingest(cwd === process.cwd() ? file : resolve(cwd, file), {
          autoLink: values['auto-link'] === true,
          sync: values.sync === true,
          ...(progress ? { onProgress: progress } : {}),
          ...(repo ? { repo } : {}),
        });
        reports.push(r);
        if (!values.json) {
          io.out(
            `${file}: ${r.entries.added} added, ${r.entries.updated} updated, ${r.entries.unchanged} unchanged; ` +
              `${r.embedded} embedded; ${r.codeLocations} code locations, ${r.goldenPaths} golden paths, ${r.relations} relations` +
              (r.autoLinks > 0 ? ` (${r.autoLinks} found by auto-linking)` : '') +
              (r.sync ? `; ${syncLine(r.sync)}` : '') +
              (r.changed ? '' : ' (nothing changed)'),
          );
        }
      }
      if (values.json) io.out(JSON.stringify(reports, null, 2));
      return EXIT.ok;
    },
  },
  import: {
    options: {
      core: { type: 'string' },
      type: { type: 'string' },
      'no-conventions': { type: 'boolean', default: false },
      'no-auto-link': { type: 'boolean', default: false },
    },
    args: [1, Infinity],
    uses: 'writes',
    async run({ engine, cwd }, paths, values, io) {
      const memory = await engine();
      const progress = io.isTTY && !values.json ? (m: string) => io.err(`  ${m}`) : undefined;
      const r = await memory.importMarkdown(
        paths.map((p) => resolve(cwd, p)),
        {
          ...(values.core !== undefined ? { core: values.core as string } : {}),
          ...(values.type !== undefined ? { type: values.type as string } : {}),
          conventions: values['no-conventions'] !== true,
          autoLink: values['no-auto-link'] !== true,
          ...(progress ? { onProgress: progress } : {}),
        },
      );
      if (values.json) io.out(JSON.stringify(r, null, 2));
      else {
        io.out(
          `${r.files.imported} documents: ${r.entries.added} entries added, ${r.entries.updated} updated, ${r.entries.unchanged} unchanged; ` +
            `${r.embedded} embedded; ${r.relations} relations (${r.autoLinks} found by auto-linking)` +
            (r.files.removed > 0 ? `; ${r.files.removed} documents gone` : '') +
            (r.sync && Object.values(r.sync.removed).some((n) => n > 0) ? `; ${syncLine(r.sync)}` : ''),
        );
        for (const f of r.failed) io.err(`skipped ${f.error}`);
      }
      return r.failed.length > 0 ? EXIT.invalid : EXIT.ok;
    },
  },
  'import-code': {
    options: { codebase: { type: 'string' }, 'no-auto-link': { type: 'boolean', default: false } },
    args: [1, 1],
    uses: 'writes',
    async run({ engine, cwd }, [repo], values, io) {
      if (values.codebase === undefined)
        throw new UsageError('import-code needs --codebase <id> (the first part of the code location ids)');
      const memory = await engine();
      const progress = io.isTTY && !values.json ? (m: string) => io.err(`  ${m}`) : undefined;
      const r = await memory.importCode(resolve(cwd, repo!), {
        codebase: values.codebase as string,
        autoLink: values['no-auto-link'] !== true,
        ...(progress ? { onProgress: progress } : {}),
      });
      if (values.json) io.out(JSON.stringify(r, null, 2));
      else {
        io.out(
          `${r.files.read} files read, ${r.files.unchanged} unchanged, ${r.files.removed} gone: ${r.codeLocations} code locations written, ` +
            `${r.relations} links from entries that name them` +
            (r.sync && Object.values(r.sync.removed).some((n) => n > 0) ? `; ${syncLine(r.sync)}` : ''),
        );
        for (const f of r.skipped) io.err(`skipped ${f.file}: ${f.reason}`);
      }
      return EXIT.ok;
    },
  },
  check: {
    options: {
      repo: { type: 'string' },
      codebase: { type: 'string' },
      fix: { type: 'boolean', default: false },
      'fail-on': { type: 'string' },
    },
    args: [0, 0],
    uses: 'writes',
    async run({ engine, cwd }, _, values, io) {
      const failOn = values['fail-on'] as string | undefined;
      const worst: Record<string, string[]> = {
        moved: ['moved', 'drifted', 'orphaned'],
        drifted: ['drifted', 'orphaned'],
        orphaned: ['orphaned'],
      };
      if (failOn !== undefined && !worst[failOn]) throw new UsageError(`--fail-on must be moved, drifted or orphaned, got "${failOn}"`);
      const repo = resolve(cwd, (values.repo as string | undefined) ?? (resolveConfig({ cwd }).values.repo as string | undefined) ?? '.');
      const memory = await engine();
      const r = await memory.checkCode({
        repo,
        fix: values.fix === true,
        ...(values.codebase !== undefined ? { codebase: values.codebase as string } : {}),
      });
      if (values.json) io.out(JSON.stringify(r, null, 2));
      else {
        io.out(
          `${r.locations} code locations against ${r.repo}: ${r.counts.fresh} fresh, ${r.counts.moved} moved, ${r.counts.drifted} drifted, ${r.counts.orphaned} orphaned` +
            (values.fix ? `; ${r.fixed} re-anchored` : ''),
        );
        for (const p of r.problems) {
          const at = `${p.code.filePath}${p.code.symbol ? `#${p.code.symbol}` : ''}${p.code.startLine !== null ? `:${p.code.startLine}-${p.code.endLine ?? p.code.startLine}` : ''}`;
          io.out(`${p.status.padEnd(8)} ${at}  ${p.detail}`);
          for (const e of p.entries) io.out(`         ← ${e.title} (${e.id})`);
          if (p.hiddenEntries > 0) io.out(`         ← ${p.hiddenEntries} secret ${p.hiddenEntries === 1 ? 'entry' : 'entries'}`);
          for (const g of p.goldenPaths) io.out(`         ← golden path ${g.name} (${g.id})`);
        }
      }
      const failing =
        failOn === undefined
          ? 0
          : r.problems.filter((p) => worst[failOn]!.includes(p.status) && !(values.fix && p.status === 'moved')).length;
      return failing > 0 ? EXIT.stale : EXIT.ok;
    },
  },
  context: {
    options: {
      ...CONTEXT_OPTIONS,
      'no-code': { type: 'boolean', default: false },
      llm: { type: 'boolean', default: false },
      'max-select': { type: 'string' },
      format: { type: 'string' },
      diff: { type: 'boolean', default: false },
      staged: { type: 'boolean', default: false },
      repo: { type: 'string' },
    },
    args: [0, 1],
    uses: 'reads',
    async run({ engine, cwd }, [task], v, io) {
      const style = (v.format as string | undefined) ?? (v.json ? 'json' : 'text');
      if (!['text', 'prompt', 'markdown', 'json'].includes(style))
        throw new UsageError(`--format must be text, prompt, markdown or json, got "${style}"`);
      const maxSelect = v['max-select'] !== undefined ? int('max-select', v['max-select'] as string) : undefined;
      const llmFilter = v.llm ? (maxSelect !== undefined ? { maxSelect } : true) : undefined;
      const options = { ...contextOptions(v), ...(v['no-code'] ? { includeCode: false } : {}), ...(llmFilter ? { llmFilter } : {}) };
      const fromDiff = v.diff === true || v.staged === true;
      if (!fromDiff && task === undefined)
        throw new UsageError('context needs a task in quotes, or --diff [<range>] / --staged for the context of a change');
      if (!fromDiff && v.repo !== undefined) throw new UsageError('--repo goes with --diff or --staged');
      let bundle: ContextBundle;
      if (fromDiff) {
        const repo = resolve(cwd, (v.repo as string | undefined) ?? (resolveConfig({ cwd }).values.repo as string | undefined) ?? '.');
        const diff = await (
          await engine()
        ).contextForDiff({ repo, ...(task !== undefined ? { range: task } : {}), ...(v.staged ? { staged: true } : {}) }, options);
        if (style === 'text')
          for (const c of diff.changes)
            io.out(
              `Changed: ${c.change} ${c.oldPath ? `${c.oldPath} → ` : ''}${c.path}${c.symbols.length > 0 ? ` (${c.symbols.join(', ')})` : ''}`,
            );
        bundle = diff;
      } else bundle = await (await engine()).buildTaskContext(task!, options);
      const text = formatContext(bundle, { style: style as ContextStyle });
      if (text === '') io.err('no relevant memory for this task (the prompt block is empty)');
      else io.out(text);
      // The text view lists the notes itself; the others are for a prompt or a program.
      if (bundle.degraded && style !== 'text') for (const note of bundle.notes) io.err(`note: ${note}`);
      return EXIT.ok;
    },
  },
  eval: {
    options: {
      strategies: { type: 'string' },
      k: { type: 'string' },
      data: { type: 'string' },
      split: { type: 'string' },
      'auto-link': { type: 'boolean' },
      'no-auto-link': { type: 'boolean' },
      'limit-queries': { type: 'string' },
      out: { type: 'string' },
      'save-eval-file': { type: 'string' },
      'keep-db': { type: 'string' },
      misses: { type: 'string' },
      'simulate-feedback': { type: 'boolean', default: false },
      peers: { type: 'boolean', default: false },
      'score-combination': { type: 'string' },
      report: { type: 'string' },
    },
    args: [1, 1],
    uses: 'nothing',
    async run({ cwd }, [target], v, io) {
      const [{ ADAPTERS }, { loadEvalFile }, { formatReport, runEval, STRATEGIES }] = await Promise.all([
        import('../eval/adapters/index.js'),
        import('../eval/evalFile.js'),
        import('../eval/runEval.js'),
      ]);
      const adapter = ADAPTERS[target!];
      const list = (name: string) =>
        typeof v[name] === 'string'
          ? (v[name] as string)
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean)
          : undefined;
      const strategies = list('strategies');
      for (const s of strategies ?? [])
        if (!STRATEGIES.includes(s as Strategy)) throw new UsageError(`--strategies takes ${STRATEGIES.join(', ')}; got "${s}"`);
      const ks = list('k')?.map((k) => int('k', k)!);
      let file: EvalFile;
      if (adapter && !existsSync(target!)) {
        if (io.isTTY && !v.json) io.err(`building the ${target} eval file …`);
        file = await adapter.build({
          ...(typeof v.data === 'string' ? { data: v.data } : {}),
          ...(typeof v.split === 'string' ? { split: v.split } : {}),
        });
      } else {
        file = await loadEvalFile(target!);
      }
      const limit = v['limit-queries'] !== undefined ? int('limit-queries', v['limit-queries'] as string) : undefined;
      if (typeof v.report === 'string' && !v.report.endsWith('.html'))
        throw new UsageError(`--report writes an HTML file; give a name ending in .html, got "${v.report}"`);
      const ksAsked = ks ?? adapter?.ks ?? [2, 5, 8, 10, 25, 50];
      // A report lists each strategy's misses: at the k nearest 10 unless --misses says where.
      const misses =
        int('misses', v.misses as string | undefined) ??
        (typeof v.report === 'string' ? [...ksAsked].sort((a, b) => Math.abs(a - 10) - Math.abs(b - 10))[0] : undefined);
      if (misses !== undefined && misses < 1) throw new UsageError(`--misses takes a cut-off of 1 or more, got ${misses}`);
      if (limit !== undefined) file = { ...file, queries: file.queries.slice(0, limit) };
      if (typeof v['save-eval-file'] === 'string') await writeFile(v['save-eval-file'], JSON.stringify(file));
      const autoLink = v['no-auto-link'] ? false : v['auto-link'] ? true : (adapter?.autoLink ?? false);
      const combination = v['score-combination'] as ScoreCombination | undefined;
      if (combination !== undefined && !SCORE_COMBINATIONS.includes(combination))
        throw new UsageError(`--score-combination must be ${SCORE_COMBINATIONS.join(' or ')}, got "${combination}"`);
      const report = await runEval(file, {
        ...(strategies ? { strategies: strategies as Strategy[] } : {}),
        ks: ksAsked,
        autoLink,
        ...(typeof v['keep-db'] === 'string' ? { keepDb: v['keep-db'] } : {}),
        ...(misses !== undefined ? { misses } : {}),
        ...(v['simulate-feedback'] ? { simulateFeedback: true } : {}),
        ...(v.peers ? { peers: true } : {}),
        ...(combination !== undefined ? { context: { scoreCombination: combination } } : {}),
        onProgress: (m) => io.isTTY && !v.json && io.err(m),
      });
      if (typeof v.out === 'string') await writeFile(v.out, JSON.stringify(report, null, 2));
      if (typeof v.report === 'string') {
        await writeFile(resolve(cwd, v.report), (await import('../eval/evalReport.js')).evalReportHtml(report));
        io.err(`wrote ${v.report}`);
      }
      print(io, v.json === true, report, () => formatReport(report, adapter && !existsSync(target!) ? adapter.reference : []));
      return EXIT.ok;
    },
  },
  config: {
    options: {},
    args: [0, 0],
    uses: 'nothing',
    async run(_context, _args, v, io) {
      const resolved = resolveConfig({ options: typeof v.db === 'string' ? { db: v.db } : {} });
      const rows = describeConfig(resolved);
      print(io, v.json === true, { file: resolved.file, settings: rows }, () =>
        [
          `config file: ${resolved.file ?? '(none)'}`,
          ...rows.map(
            (r) =>
              `${r.key.padEnd(30)} ${r.value === null ? '-' : JSON.stringify(r.value)}  (${r.source === 'unset' ? `unset; ${r.env}` : r.source === 'env' ? `env ${r.env}` : r.source})`,
          ),
        ].join('\n'),
      );
      return EXIT.ok;
    },
  },
  find: {
    options: CONTEXT_OPTIONS,
    args: [1, 1],
    uses: 'reads',
    async run({ engine }, [query], v, io) {
      const entries = await (await engine()).findWithContext(query!, contextOptions(v));
      print(io, v.json === true, entries, () =>
        entries.length === 0
          ? 'no matching entries'
          : entries
              .map((e, i) => `${listLine(i, e.score, e.entry)}\n${e.why.map((r) => `      ${describeReason(r)}`).join('\n')}`)
              .join('\n'),
      );
      return EXIT.ok;
    },
  },
  search: {
    options: {
      ...FILTERS,
      limit: { type: 'string' },
      mode: { type: 'string', default: 'hybrid' },
      candidates: { type: 'string' },
      fusion: { type: 'string' },
      mentions: { type: 'boolean' },
    },
    args: [1, 1],
    uses: 'reads',
    async run({ engine }, [query], v, io) {
      const mode = v.mode as PresetName;
      if (!PRESET_NAMES.includes(mode)) throw new UsageError(`--mode must be one of ${PRESET_NAMES.join(', ')}, got "${String(v.mode)}"`);
      const accepts = presetOptions(mode);
      const given = {
        ...(v.candidates !== undefined ? { candidates: int('candidates', v.candidates as string) } : {}),
        ...(v.fusion !== undefined ? { fusion: v.fusion as 'rrf' | 'weighted' } : {}),
        ...(v.mentions ? { mentions: true } : {}),
      };
      for (const option of Object.keys(given))
        if (!accepts.includes(option)) throw new UsageError(`--${option} does not apply to --mode ${mode}`);
      if (v.fusion !== undefined && v.fusion !== 'rrf' && v.fusion !== 'weighted')
        throw new UsageError(`--fusion must be rrf or weighted, got "${String(v.fusion)}"`);
      const limit = v.limit !== undefined ? int('limit', v.limit as string) : undefined;
      const overrides = {
        ...filterOptions(v as FilterValues),
        ...given,
        ...(limit !== undefined ? (accepts.includes('limit') ? { limit } : { maxEntries: limit }) : {}),
      };
      const memory = await engine();
      let hits: SearchHit[];
      let result: unknown;
      if (mode === 'matryoshka') {
        // Its JSON keeps the stage-1 count and the small-vector length.
        const r = await memory.matryoshkaSearch(query!, overrides);
        hits = r.hits;
        result = r;
        if (!v.json) io.err(`stage 1: ${r.stage1Candidates} candidates on ${r.smallDimensions}-d vectors`);
      } else {
        const r = await memory.search(query!, { recipe: mode, overrides });
        for (const note of r.notes) io.err(`note: ${note}`);
        result = hits = r;
      }
      print(io, v.json === true, result, () =>
        hits.length === 0
          ? 'no matching entries'
          : hits.map((h, i) => `${listLine(i, h.score, h.entry)}  ← ${h.why.map(describeReason).join('; ')}`).join('\n'),
      );
      return EXIT.ok;
    },
  },
  traverse: {
    options: { depth: { type: 'string' }, relations: { type: 'string' }, direction: { type: 'string' }, ...INCLUDE_SECRET },
    args: [1, 1],
    uses: 'reads',
    async run({ engine }, [id], v, io) {
      const direction = v.direction as string | undefined;
      if (direction !== undefined && !['outgoing', 'incoming', 'both'].includes(direction))
        throw new UsageError(`--direction must be outgoing, incoming or both, got "${direction}"`);
      const hits = await (
        await engine()
      ).traverse(id!, {
        ...(v.depth !== undefined ? { depth: int('depth', v.depth as string) } : {}),
        ...(relationList(v.relations) ? { relationTypes: relationList(v.relations) } : {}),
        ...(direction ? { direction: direction as 'outgoing' | 'incoming' | 'both' } : {}),
        ...sensitivityOf(v),
      });
      print(io, v.json === true, hits, () =>
        hits.length === 0
          ? `nothing reachable from ${id}`
          : hits
              .map(
                (h) =>
                  `${h.hops} hop${h.hops === 1 ? ' ' : 's'}  [${h.entry.entryType}] ${h.entry.title} (${h.entry.id})\n      ${h.path.map((p) => `${p.from} -${p.type}-> ${p.to}`).join(', ')}`,
              )
              .join('\n'),
      );
      return EXIT.ok;
    },
  },
  'related-to-code': {
    options: { limit: { type: 'string' }, ...INCLUDE_SECRET },
    args: [2, 2],
    uses: 'reads',
    async run({ engine }, [file, query], v, io) {
      const hits = await (
        await engine()
      ).findRelatedToCode(file!, query!, {
        ...(v.limit !== undefined ? { limit: int('limit', v.limit as string) } : {}),
        ...sensitivityOf(v),
      });
      print(io, v.json === true, hits, () =>
        hits.length === 0
          ? `no entries reference ${file}`
          : hits
              .map((h, i) => `${listLine(i, h.similarity, h.entry)}\n      ${h.references.map((r) => codeSpan(r.code)).join(', ')}`)
              .join('\n'),
      );
      return EXIT.ok;
    },
  },
  'golden-paths': {
    options: {},
    args: [1, Infinity],
    uses: 'reads',
    async run({ engine }, concepts, v, io) {
      const paths = await (await engine()).findGoldenPaths(concepts);
      print(io, v.json === true, paths, () => (paths.length === 0 ? 'no golden paths match' : paths.map(formatGoldenPath).join('\n\n')));
      return EXIT.ok;
    },
  },
  index: {
    options: { 'ann-min-rows': { type: 'string' } },
    args: [0, 0],
    uses: 'reads',
    async run({ engine }, _args, v, io) {
      const r = await (
        await engine()
      ).index({
        ...(v['ann-min-rows'] !== undefined ? { annMinRows: int('ann-min-rows', v['ann-min-rows'] as string) } : {}),
        onProgress: (m) => io.isTTY && !v.json && io.err(m),
      });
      print(io, v.json === true, r, () =>
        r.rows === 0
          ? 'the database is empty: nothing to index'
          : `${r.rows} entries: scalar indexes on ${r.scalar.join(', ')}, ${r.ann ? 'ANN index on vector_small' : 'no ANN index (exact scan is faster at this size)'}; small vectors by ${r.projection}` +
            (r.snapshots.length > 0
              ? `\nsnapshots written: ${r.snapshots.map((s) => `${s.structure} (${(s.bytes / 1024 / 1024).toFixed(1)} MB)`).join(', ')}`
              : '\nsnapshots already current'),
      );
      return EXIT.ok;
    },
  },
  'code-refs': {
    options: { file: { type: 'string' }, symbol: { type: 'string' }, codebase: { type: 'string' }, ...INCLUDE_SECRET },
    args: [0, 0],
    uses: 'reads',
    async run({ engine }, _args, v, io) {
      if (v.file === undefined && v.symbol === undefined && v.codebase === undefined)
        throw new UsageError('code-refs needs --file, --symbol or --codebase');
      const hits = await (
        await engine()
      ).findByCodeReference(
        {
          ...(typeof v.file === 'string' ? { filePath: v.file } : {}),
          ...(typeof v.symbol === 'string' ? { symbol: v.symbol } : {}),
          ...(typeof v.codebase === 'string' ? { codebaseId: v.codebase } : {}),
        },
        sensitivityOf(v),
      );
      print(io, v.json === true, hits, () =>
        hits.length === 0
          ? 'no entries reference that code'
          : hits
              .map(
                (h) =>
                  `${codeSpan(h.code)}  relevance ${h.relevance.toFixed(2)}  ← [${h.entry.entryType}] ${h.entry.title} (${h.entry.id})`,
              )
              .join('\n'),
      );
      return EXIT.ok;
    },
  },
  'golden-path': {
    options: {},
    args: [1, 1],
    uses: 'reads',
    async run({ engine }, [id], v, io) {
      const path = await (await engine()).getGoldenPath(id!);
      if (!path) {
        io.err(`memcore: no golden path with id "${id}"`);
        if (v.json) io.out(JSON.stringify({ error: { code: 'NOT_FOUND', message: `no golden path with id "${id}"` } }));
        return EXIT.notFound;
      }
      print(io, v.json === true, path, () => formatGoldenPath(path));
      return EXIT.ok;
    },
  },
  delete: {
    options: {},
    args: [1, Infinity],
    uses: 'reads',
    async run({ engine }, ids, v, io) {
      const result = await (await engine()).delete(ids);
      print(io, v.json === true, result, () => `deleted ${result.deleted} of ${ids.length} entr${ids.length === 1 ? 'y' : 'ies'}`);
      return result.deleted === 0 ? EXIT.notFound : EXIT.ok;
    },
  },
  feedback: {
    options: {
      useful: { type: 'boolean', default: false },
      'not-useful': { type: 'boolean', default: false },
      score: { type: 'string' },
      bundle: { type: 'string' },
      note: { type: 'string' },
      task: { type: 'string' },
      report: { type: 'boolean', default: false },
    },
    args: [0, 1],
    uses: 'writes',
    async run({ engine }, [entryId], v, io) {
      const memory = await engine();
      if (v.report) {
        if (entryId !== undefined) throw new UsageError('feedback --report takes no entry id');
        const report = await memory.effectivenessReport();
        if (v.json) io.out(JSON.stringify(report, null, 2));
        else
          for (const kind of ['entries', 'sources', 'cores'] as const) {
            io.out(`${kind}:`);
            for (const r of report[kind]) io.out(`  ${r.value.toFixed(2)}  ${r.id}  (${r.signals} rating${r.signals === 1 ? '' : 's'})`);
          }
        return EXIT.ok;
      }
      const given = [v.useful === true, v['not-useful'] === true, v.score !== undefined].filter(Boolean).length;
      if (entryId === undefined || given !== 1)
        throw new UsageError('feedback needs an entry id and one of --useful, --not-useful or --score <0..1> (or --report)');
      const useful = v.useful ? true : v['not-useful'] ? false : num('score', v.score as string)!;
      const r = await memory.feedback({
        entryId,
        useful,
        ...(v.bundle !== undefined ? { bundleId: v.bundle as string } : {}),
        ...(v.note !== undefined ? { note: v.note as string } : {}),
        ...(v.task !== undefined ? { task: v.task as string } : {}),
      });
      if (v.json) io.out(JSON.stringify(r, null, 2));
      else
        io.out(
          `${r.entryId}: ${r.recorded ? 'recorded' : 'already rated from this bundle'}; effectiveness ${r.effectiveness.toFixed(2)} over ${r.signals} rating${r.signals === 1 ? '' : 's'}`,
        );
      return EXIT.ok;
    },
  },
  gaps: {
    options: { since: { type: 'string' } },
    args: [0, 0],
    uses: 'reads',
    async run({ engine }, _, v, io) {
      const since = date('since', v.since as string | undefined);
      const groups = await (await engine()).gaps(since ? { since } : {});
      if (v.json) io.out(JSON.stringify(groups, null, 2));
      else if (groups.length === 0) io.out('no unanswered tasks logged');
      else {
        io.out(
          `${groups.length} gap${groups.length === 1 ? '' : 's'}: tasks memory could not answer, similar ones together, most asked first`,
        );
        for (const g of groups) {
          io.out(`${String(g.count).padStart(4)}×  ${g.task.replace(/\s+/g, ' ').slice(0, 120)}  (last ${g.lastAt.slice(0, 10)})`);
          for (const other of [...new Set(g.tasks.map((t) => t.task))].filter((t) => t !== g.task).slice(0, 3))
            io.out(`         also: ${other.replace(/\s+/g, ' ').slice(0, 110)}`);
        }
      }
      return EXIT.ok;
    },
  },
  stats: {
    options: {},
    args: [0, 0],
    uses: 'reads',
    async run({ engine }, _args, v, io) {
      const s = await (await engine()).stats();
      print(io, v.json === true, s, () =>
        [
          `entries: ${s.entries}`,
          `cores: ${
            Object.entries(s.cores)
              .map(([k, n]) => `${k} (${n})`)
              .join(', ') || '-'
          }`,
          `entry types: ${
            Object.entries(s.entryTypes)
              .map(([k, n]) => `${k} (${n})`)
              .join(', ') || '-'
          }`,
          `code locations: ${s.codeLocations}`,
          `golden paths: ${s.goldenPaths}`,
          `relations: ${Object.entries(s.relations)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`,
          `embedder: ${s.embedder.id} (${s.embedder.dimensions}-d)`,
          `generation: ${s.generation}`,
          `search runs on: exact ${s.search.exact}, stage 1 ${s.search.stage1}, entries ${s.search.entries}`,
          ...(Object.keys(s.resident).length > 0
            ? [
                `held in memory: ${Object.entries(s.resident)
                  .map(([k, r]) => `${k} (${r.loadedFrom}, ${Math.round(r.ms)} ms)`)
                  .join(', ')}`,
              ]
            : []),
          ...Object.values(s.resident).flatMap((r) => (r.note ? [`note: ${r.note}`] : [])),
        ].join('\n'),
      );
      return EXIT.ok;
    },
  },
  list: {
    options: {
      core: FILTERS.core,
      type: FILTERS.type,
      tag: FILTERS.tag,
      'as-of': FILTERS['as-of'],
      ...INCLUDE_SECRET,
      limit: { type: 'string' },
      offset: { type: 'string' },
    },
    args: [0, 0],
    uses: 'reads',
    async run({ engine }, _args, v, io) {
      const entries = await (
        await engine()
      ).listEntries({
        ...filterOptions(v as FilterValues),
        ...(v.limit !== undefined ? { limit: int('limit', v.limit as string) } : {}),
        ...(v.offset !== undefined ? { offset: int('offset', v.offset as string) } : {}),
      });
      print(io, v.json === true, entries, () =>
        entries.length === 0 ? 'no entries' : entries.map((e) => `[${e.entryType}] ${e.title}  (${e.coreId}, id ${e.id})`).join('\n'),
      );
      return EXIT.ok;
    },
  },
  show: {
    options: INCLUDE_SECRET,
    args: [1, 1],
    uses: 'reads',
    async run({ engine }, [id], v, io) {
      const details = await (await engine()).entryDetails(id!, sensitivityOf(v));
      if (!details) throw new MemcoreError(`no entry with id "${id}"`, 'NOT_FOUND');
      const { entry } = details;
      print(io, v.json === true, details, () =>
        [
          entryText(entry),
          '',
          `confidence ${entry.confidence}, importance ${entry.importance}, sensitivity ${entry.sensitivity}${entry.pinned ? ', pinned' : ''}${entry.tags.length ? `, tags ${entry.tags.join(', ')}` : ''}`,
          `created ${entry.createdAt.toISOString()}, updated ${entry.updatedAt.toISOString()}${entry.validTo ? `, valid until ${entry.validTo.toISOString()}` : ''}${entry.source ? `, source ${entry.source}` : ''}`,
          ...(details.supersededBy ? [`superseded by ${details.supersededBy}`] : []),
          ...(details.links.length ? ['links:', ...details.links.map((l) => `  ${l.from} -${l.type}-> ${l.to}`)] : ['no links']),
          ...details.code.map((c) => `code: ${codeSpan(c.code)} (relevance ${c.relevance})`),
          ...details.goldenPaths.map((p) => `golden path: ${p.name} [${p.id}]`),
        ].join('\n'),
      );
      return EXIT.ok;
    },
  },
  export: {
    options: { format: { type: 'string' }, core: FILTERS.core, ...INCLUDE_SECRET, out: { type: 'string' } },
    args: [0, 0],
    uses: 'reads',
    async run({ engine, cwd }, _args, v, io) {
      const format = (v.format as string | undefined) ?? (v.json ? 'json' : 'yaml');
      if (format !== 'yaml' && format !== 'jsonl' && format !== 'json')
        throw new UsageError(`--format must be yaml, jsonl or json, got "${format}"`);
      const memory = await engine();
      const doc = await memory.exportMemory({ ...(v.core ? { cores: v.core as string[] } : {}), ...sensitivityOf(v) });
      const { serializeMemoryDocument } = await import('../ops/export.js');
      const text = serializeMemoryDocument(doc, format);
      if (typeof v.out === 'string') {
        await writeFile(resolve(cwd, v.out), text);
        io.err(
          `${doc.entries!.length} entries, ${doc.code_locations!.length} code locations, ${doc.golden_paths!.length} golden paths, ${doc.relations!.length} relations → ${v.out}`,
        );
      } else io.out(text.trimEnd());
      return EXIT.ok;
    },
  },
  backup: {
    options: {},
    args: [1, 1],
    uses: 'reads',
    async run({ engine, cwd }, [dest], v, io) {
      const progress = io.isTTY && !v.json ? (done: number, total: number) => io.err(`copied ${done}/${total} files`) : undefined;
      const manifest = await (await engine()).backup(resolve(cwd, dest!), progress ? { onProgress: progress } : {});
      const bytes = manifest.files.reduce((a, f) => a + f.bytes, 0);
      print(
        io,
        v.json === true,
        manifest,
        () =>
          `backed up ${manifest.counts.entries} entries, ${manifest.counts.relations} relations (generation ${manifest.generation}, ${manifest.files.length} files, ${(bytes / 1e6).toFixed(1)} MB) to ${dest}`,
      );
      return EXIT.ok;
    },
  },
  restore: {
    options: { force: { type: 'boolean', default: false } },
    args: [1, 1],
    uses: 'nothing',
    async run({ dir, cwd }, [src], v, io) {
      const running = await connectToOwner(dir, { memcore: PROTOCOL, kind: 'status' });
      if (running) {
        running.socket.destroy();
        throw new MemcoreError(
          `${dir} is served by pid ${running.welcome.pid}; stop that server before restoring over its folder`,
          'STORE',
        );
      }
      const { restoreMemory } = await import('../ops/restore.js');
      const manifest = await restoreMemory(resolve(cwd, src!), { path: dir, force: v.force === true });
      print(
        io,
        v.json === true,
        manifest,
        () =>
          `restored ${manifest.counts.entries} entries, ${manifest.counts.relations} relations (generation ${manifest.generation}, taken ${manifest.createdAt}) into ${dir}`,
      );
      return EXIT.ok;
    },
  },
  doctor: {
    options: { repair: { type: 'boolean', default: false } },
    args: [0, 0],
    uses: 'reads',
    async run({ engine, dir, served }, _args, v, io) {
      let report: DoctorReport;
      if (served) {
        // The server holds the folder: its open stores are checked, with what it holds in memory.
        if (v.repair) throw new MemcoreError(`${dir} is served by this server (pid ${process.pid}); stop it to repair the folder`, 'STORE');
        report = await (await engine()).checkHealth();
      } else {
        const { doctor } = await import('../ops/doctor.js');
        report = await doctor(dir, { repair: v.repair === true });
      }
      print(io, v.json === true, report, () =>
        [
          ...report.findings.map(
            (f) =>
              `${(f.ok ? 'ok' : f.repaired ? 'fixed' : 'BAD').padEnd(5)} ${f.check}: ${f.message}${!f.ok && f.repair ? (f.repaired ? '' : `\n      --repair would ${f.repair}`) : ''}`,
          ),
          report.healthy
            ? 'healthy'
            : `needs attention${report.findings.some((f) => !f.ok && f.repair && !f.repaired) ? ' (run with --repair)' : ''}`,
        ].join('\n'),
      );
      return report.healthy ? EXIT.ok : EXIT.store;
    },
  },
  reembed: {
    options: {
      embedder: { type: 'string' },
      'base-url': { type: 'string' },
      dimensions: { type: 'string' },
      truncatable: { type: 'boolean', default: false },
    },
    args: [0, 0],
    uses: 'reads',
    async run({ engine }, _args, v, io) {
      const spec = v.embedder as string | undefined;
      if (spec === undefined)
        throw new UsageError(
          'reembed needs --embedder local or --embedder openai:<model> (with --dimensions, and --base-url for a local server)',
        );
      let embedder: EmbedderConfig;
      if (spec === 'local') embedder = { provider: 'local' };
      else if (spec.startsWith('openai:') && spec.length > 7) {
        const dimensions = int('dimensions', v.dimensions as string | undefined);
        if (dimensions === undefined) throw new UsageError('--embedder openai:<model> needs --dimensions');
        embedder = {
          provider: 'openai',
          model: spec.slice(7),
          dimensions,
          ...(typeof v['base-url'] === 'string' ? { baseURL: v['base-url'] } : {}),
          ...(v.truncatable ? { truncatable: true } : {}),
          ...(process.env.MEMCORE_EMBED_API_KEY ? { apiKey: process.env.MEMCORE_EMBED_API_KEY } : {}),
        };
      } else throw new UsageError(`--embedder must be local or openai:<model>, got "${spec}"`);
      const report = await (await engine()).reembed(embedder, { onProgress: (m) => io.isTTY && !v.json && io.err(m) });
      print(
        io,
        v.json === true,
        report,
        () => `re-embedded ${report.entries} entries with ${report.to} (was ${report.from}; ${report.embedded} texts sent to the model)`,
      );
      return EXIT.ok;
    },
  },
  'core-memory': {
    options: { 'max-tokens': { type: 'string' } },
    args: [1, 1],
    uses: 'reads',
    async run({ engine }, [core], v, io) {
      const memory = await (
        await engine()
      ).coreMemory(core!, v['max-tokens'] !== undefined ? { maxTokens: int('max-tokens', v['max-tokens'] as string)! } : {});
      if (memory.entries.length === 0) throw new MemcoreError(`core "${core}" holds no entries in effect`, 'NOT_FOUND');
      print(io, v.json === true, memory, () => memory.text);
      return EXIT.ok;
    },
  },
  serve: {
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'allow-remote': { type: 'boolean', default: false },
      'no-http': { type: 'boolean', default: false },
    },
    args: [0, 0],
    uses: 'nothing',
    async run({ dir, cwd }, _args, v, io) {
      const running = await connectToOwner(dir, { memcore: PROTOCOL, kind: 'status' });
      if (running) {
        running.socket.destroy();
        throw new MemcoreError(
          `${dir} is already served by pid ${running.welcome.pid}${running.welcome.http ? ` at ${running.welcome.http}` : ''}`,
          'STORE',
        );
      }
      const port = v.port !== undefined ? int('port', v.port as string)! : undefined;
      if (port !== undefined && (port < 0 || port > 65_535)) throw new UsageError(`--port must be 0 to 65535, got ${port}`);
      const engine = await openMemory({ path: dir, cwd });
      let owner: Owner;
      try {
        owner = await startOwner(engine, {
          runCli: (argv, cliIo, context) => main(argv, cliIo, context),
          version: VERSION,
          log: (m) => io.err(m),
          ...(v['no-http']
            ? {}
            : {
                http: {
                  ...(port !== undefined ? { port } : {}),
                  ...(typeof v.host === 'string' ? { host: v.host } : {}),
                  allowRemote: v['allow-remote'] === true,
                },
              }),
        });
      } catch (e) {
        await engine.close();
        throw e;
      }
      const page = owner.pageLogin?.();
      const ready = {
        pid: process.pid,
        db: dir,
        socket: owner.socket,
        ...(owner.url ? { url: owner.url, tokenFile: join(dir, 'server.token'), page } : {}),
      };
      print(io, v.json === true, ready, () =>
        [
          `memcore serving ${dir} (pid ${process.pid})`,
          `  control socket ${owner.socket}`,
          ...(owner.url
            ? [
                `  MCP over HTTP ${owner.url} (bearer token in ${ready.tokenFile})`,
                `  memory page ${page} (signs in once; memcore ui prints another)`,
              ]
            : []),
        ].join('\n'),
      );
      await new Promise<void>((done) => {
        process.once('SIGINT', done);
        process.once('SIGTERM', done);
      });
      io.err('memcore: stopping');
      await owner.close();
      await engine.close();
      return EXIT.ok;
    },
  },
  ui: {
    options: { port: { type: 'string' } },
    args: [0, 0],
    uses: 'nothing',
    async run({ dir, cwd }, _args, v, io) {
      const port = v.port !== undefined ? int('port', v.port as string)! : 0;
      if (port < 0 || port > 65_535) throw new UsageError(`--port must be 0 to 65535, got ${port}`);
      let login = await askPageLogin(dir);
      let started: number | undefined;
      if (!login) {
        if (!existsSync(join(dir, 'meta.json')))
          throw new MemcoreError(`no memory at ${dir}; create it with \`memcore ingest <file>\` (or pass --db)`, 'NOT_FOUND');
        started = startServerInBackground(dir, cwd, port);
        login = await waitForPageLogin(dir, started);
      } else if (v.port !== undefined) {
        io.err(`memcore: ${dir} is served already; --port is not used`);
      }
      if ('error' in login) throw new MemcoreError(login.error, 'STORE');
      const answer = { url: login.url, startedServer: started ?? null, log: started ? join(dir, 'server.log') : null };
      print(io, v.json === true, answer, () =>
        [
          login.url,
          started ? `(started a server for ${dir}, pid ${started}; stop it with kill ${started}; log in ${answer.log})` : '',
          'The address signs in one browser, once, within 10 minutes.',
        ]
          .filter(Boolean)
          .join('\n'),
      );
      return EXIT.ok;
    },
  },
  mcp: {
    options: {},
    args: [0, 0],
    uses: 'nothing',
    async run({ dir, cwd }, _args, _v, io) {
      const { runStdioRelay } = await import('../server/stdioRelay.js');
      await runStdioRelay(
        dir,
        async () => {
          const engine = await openMemory({ path: dir, cwd });
          try {
            return {
              engine,
              owner: await startOwner(engine, {
                runCli: (argv, cliIo, context) => main(argv, cliIo, context),
                version: VERSION,
                log: (m) => io.err(m),
              }),
            };
          } catch (e) {
            await engine.close();
            throw e;
          }
        },
        { stdin: process.stdin, stdout: process.stdout, log: (m) => io.err(m) },
      );
      return EXIT.ok;
    },
  },
};

const isUsageError = (e: unknown) => e instanceof UsageError || !!(e as { code?: string }).code?.startsWith?.('ERR_PARSE_ARGS');

function exitCodeOf(e: unknown): number {
  if (isUsageError(e)) return EXIT.usage;
  if (e instanceof MemcoreError) {
    if (e.code === 'INVALID_INPUT' || e.code === 'INVALID_FILE') return EXIT.invalid;
    if (e.code === 'NOT_FOUND') return EXIT.notFound;
    if (e.code === 'MODEL_MISMATCH') return EXIT.mismatch;
    if (e.code === 'STORE') return EXIT.store;
  }
  return EXIT.failure;
}

/**
 * Runs one command line; returns the exit code. Exported for tests and for the owner of a folder,
 * which runs the CLI calls it is sent against its own engine (`context.engine`).
 */
export async function main(argv: string[], io: Io, context: { engine?: MemoryEngine; cwd?: string } = {}): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[name];
  let json = rest.includes('--json');
  let memory: MemoryEngine | undefined;
  const cwd = context.cwd ?? process.cwd();
  try {
    if (!command) throw new UsageError(`unknown command "${name}"; see memcore --help`);
    const { values, positionals } = parseArgs({
      args: rest,
      options: { ...COMMON, ...command.options },
      allowPositionals: true,
      strict: true,
    });
    json = values.json === true;
    if (values.help) {
      io.out(commandHelp(name));
      return EXIT.ok;
    }
    const [min, max] = command.args;
    if (positionals.length < min || positionals.length > max) {
      throw new UsageError(
        `${name} takes ${min === max ? min : `${min} or more`} argument${max === 1 ? '' : 's'}, got ${positionals.length}; see memcore --help`,
      );
    }
    const dir = resolve(cwd, resolveConfig({ options: typeof values.db === 'string' ? { db: values.db } : {}, cwd }).values.db as string);
    if (command.uses !== 'nothing' && !context.engine) {
      const served = await runThroughOwner(dir, argv, cwd, io);
      if (served !== undefined) return served;
    }
    // Asked for once the command line is checked, so that a bad option is reported first.
    const engine = async () => {
      if (context.engine) return context.engine;
      if (command.uses === 'reads' && !memory && !existsSync(join(dir, 'meta.json'))) {
        throw new MemcoreError(`no memory at ${dir}; create it with \`memcore ingest <file>\` (or pass --db)`, 'NOT_FOUND');
      }
      return (memory ??= await openMemory({ path: dir, cwd }));
    };
    return await command.run({ engine, cwd, dir, served: context.engine !== undefined }, positionals, values, io);
  } catch (e) {
    const message = (e as Error).message.split('\n')[0] ?? String(e);
    io.err(`memcore: ${message}`);
    if (json)
      io.out(JSON.stringify({ error: { code: e instanceof MemcoreError ? e.code : isUsageError(e) ? 'USAGE' : 'FAILURE', message } }));
    return exitCodeOf(e);
  } finally {
    await memory?.close();
  }
}

/** Asks the folder's server for a sign-in address of the memory page; undefined when no server owns the folder. */
async function askPageLogin(dir: string): Promise<PageLogin | undefined> {
  const reached = await connectToOwner(dir, { memcore: PROTOCOL, kind: 'page-login' });
  if (!reached) return undefined;
  const { socket, rest } = reached;
  return new Promise((resolveLogin, reject) => {
    let answer: PageLogin | undefined;
    readLines(socket, (line) => (answer = JSON.parse(line) as PageLogin));
    socket.once('close', () =>
      answer ? resolveLogin(answer) : reject(new Error(`the memcore server of ${dir} closed without an address`)),
    );
    socket.on('error', () => undefined);
    if (rest.length) socket.unshift(rest);
    socket.resume();
  });
}

/** `memcore serve` for the folder as a process of its own that outlives this one; returns its pid. */
function startServerInBackground(dir: string, cwd: string, port: number): number {
  const cli = fileURLToPath(import.meta.url);
  // From a checkout the CLI is TypeScript, run through tsx as this process is.
  const loader = cli.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [];
  const log = openSync(join(dir, 'server.log'), 'a');
  const child = spawn(process.execPath, [...loader, cli, 'serve', '--db', dir, '--port', String(port)], {
    cwd,
    detached: true,
    stdio: ['ignore', log, log],
  });
  child.unref();
  return child.pid!;
}

async function waitForPageLogin(dir: string, pid: number): Promise<PageLogin> {
  for (let waited = 0; waited < 300_000; waited += 200) {
    const login = await askPageLogin(dir);
    if (login) return login;
    try {
      process.kill(pid, 0);
    } catch {
      const tail = readFileSync(join(dir, 'server.log'), 'utf8').trim().split('\n').slice(-3).join(' / ');
      throw new MemcoreError(`the server for ${dir} stopped while starting: ${tail}`, 'STORE');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new MemcoreError(`the server for ${dir} (pid ${pid}) did not start within 5 minutes; see ${join(dir, 'server.log')}`, 'STORE');
}

/** Whether server.json names a live process whose socket is not up yet (or was just taken over). */
function ownerStarting(dir: string): boolean {
  try {
    const { pid } = JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8')) as { pid: number };
    process.kill(pid, 0);
    return pid !== process.pid;
  } catch {
    return false;
  }
}

/**
 * Sends the command line to the process that owns the folder, if one does, and relays its output;
 * undefined when none does. A folder held by a process still starting up is waited for a moment.
 */
async function runThroughOwner(dir: string, argv: string[], cwd: string, io: Io): Promise<number | undefined> {
  const hello = { memcore: PROTOCOL, kind: 'cli', argv, cwd, isTTY: io.isTTY } as const;
  let reached = await connectToOwner(dir, hello);
  if (!reached && ownerStarting(dir)) {
    for (let i = 0; i < 20 && !reached; i++) {
      await new Promise((r) => setTimeout(r, 100));
      reached = await connectToOwner(dir, hello);
    }
  }
  if (!reached) return undefined;
  const { socket, rest } = reached;
  return new Promise((resolveExit, reject) => {
    let code: number | undefined;
    readLines(socket, (line) => {
      const m = JSON.parse(line) as CliMessage;
      if ('out' in m) io.out(m.out);
      else if ('err' in m) io.err(m.err);
      else code = m.exit;
    });
    socket.once('close', () =>
      code === undefined ? reject(new Error(`the memcore server of ${dir} stopped before the command finished`)) : resolveExit(code),
    );
    socket.on('error', () => undefined);
    if (rest.length) socket.unshift(rest);
    socket.resume();
  });
}

// Run when executed (also through the npm bin symlink), not when imported by tests.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const code = await main(process.argv.slice(2), {
    out: (t) => process.stdout.write(t + '\n'),
    err: (t) => process.stderr.write(t + '\n'),
    isTTY: process.stderr.isTTY === true,
  });
  process.exitCode = code;
}
