/**
 * One resolved configuration from, in order of precedence: options passed in code, MEMCORE_*
 * environment variables, `memcore.config.json|yaml|yml` in the database folder or else the
 * working directory, and defaults. Every setting is checked here; a bad one is one clear line
 * naming the setting and where it came from.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';

/** yaml is loaded only when a YAML config file is there: every CLI call resolves the configuration. */
const parseYaml = (text: string): unknown => (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);
import { invalidInput } from '../model/errors.js';
import { DEFAULTS } from './defaults.js';

type Kind = 'string' | 'url' | 'int' | 'fraction' | 'bool' | 'intList' | 'stringList' | { enum: readonly string[] };

interface Setting {
  key: string;
  env: string;
  kind: Kind;
  default?: unknown;
  secret?: boolean;
  help: string;
}

/** Every setting, its environment variable and its default. docs/configuration.md's table is generated from this list (`npm run docs:reference`). */
export const SETTINGS: readonly Setting[] = [
  { key: 'db', env: 'MEMCORE_DB', kind: 'string', default: '.memcore', help: 'database folder' },
  {
    key: 'repo',
    env: 'MEMCORE_REPO',
    kind: 'string',
    help: 'the folder code locations are relative to, for check and context --diff (default the working directory)',
  },
  {
    key: 'memory.dir',
    env: 'MEMCORE_MEMORY_DIR',
    kind: 'string',
    help: 'team memory folder of entry files (default memory/ at the root of the git repository holding the database); docs/team.md',
  },
  {
    key: 'memory.embedWaitMs',
    env: 'MEMCORE_MEMORY_EMBED_WAIT_MS',
    kind: 'int',
    default: DEFAULTS.team.embedWaitMs,
    help: "how long a running engine's catch-up with the memory folder (a pull) waits for the model, the rest embedded in the background; docs/team.md",
  },
  {
    key: 'smallDimensions',
    env: 'MEMCORE_SMALL_DIMENSIONS',
    kind: 'int',
    help: "length of vector_small for a new database (default: a quarter of the model's dimensions, at most 128)",
  },
  {
    key: 'residentMaxEntries',
    env: 'MEMCORE_RESIDENT_MAX_ENTRIES',
    kind: 'int',
    default: DEFAULTS.store.residentMaxEntries,
    help: 'stores up to this size have the entries of a bundle read from memory, and semanticSearch run exactly from memory (0: always LanceDB)',
  },
  {
    key: 'scanMaxEntries',
    env: 'MEMCORE_SCAN_MAX_ENTRIES',
    kind: 'int',
    default: DEFAULTS.store.scanMaxEntries,
    help: "stores up to this size run stage 1 as a scan of small vectors in memory (0: always LanceDB's index)",
  },
  {
    key: 'scanThreadMinEntries',
    env: 'MEMCORE_SCAN_THREAD_MIN_ENTRIES',
    kind: 'int',
    default: DEFAULTS.store.scanThreadMinEntries,
    help: 'stores from this size run that scan on a helper thread, beside the keyword search (0: any size; above scanMaxEntries: never)',
  },
  {
    key: 'graph',
    env: 'MEMCORE_GRAPH',
    kind: { enum: ['ladybug', 'kuzu'] },
    default: DEFAULTS.store.graph,
    help: 'graph database of a new folder: ladybug (LadybugDB) or kuzu (needs `npm install kuzu`); an existing folder keeps its own (memcore migrate)',
  },
  {
    key: 'embedder.provider',
    env: 'MEMCORE_EMBEDDER',
    kind: { enum: ['local', 'openai'] },
    default: 'local',
    help: 'local (offline) or openai (any OpenAI-compatible server)',
  },
  { key: 'embedder.baseURL', env: 'MEMCORE_EMBED_BASE_URL', kind: 'url', help: 'e.g. http://127.0.0.1:11434/v1' },
  { key: 'embedder.apiKey', env: 'MEMCORE_EMBED_API_KEY', kind: 'string', secret: true, help: 'bearer token (default OPENAI_API_KEY)' },
  { key: 'embedder.model', env: 'MEMCORE_EMBED_MODEL', kind: 'string', help: 'embedding model name' },
  { key: 'embedder.dimensions', env: 'MEMCORE_EMBED_DIMENSIONS', kind: 'int', help: 'vector length stored' },
  {
    key: 'embedder.matryoshkaDimensions',
    env: 'MEMCORE_EMBED_MATRYOSHKA_DIMENSIONS',
    kind: 'intList',
    help: 'sizes the model was trained for, comma-separated',
  },
  { key: 'embedder.sendDimensions', env: 'MEMCORE_EMBED_SEND_DIMENSIONS', kind: 'bool', help: 'ask the server for `dimensions`' },
  {
    key: 'embedder.truncatable',
    env: 'MEMCORE_EMBED_TRUNCATABLE',
    kind: 'bool',
    help: 'Matryoshka-trained: prefixes are valid embeddings',
  },
  {
    key: 'embedder.batchSize',
    env: 'MEMCORE_EMBED_BATCH_SIZE',
    kind: 'int',
    help: `texts per request (${DEFAULTS.openaiEmbedder.batchSize}; local ${DEFAULTS.localEmbedder.batchSize})`,
  },
  {
    key: 'embedder.concurrency',
    env: 'MEMCORE_EMBED_CONCURRENCY',
    kind: 'int',
    help: `requests in flight (${DEFAULTS.openaiEmbedder.concurrency})`,
  },
  { key: 'embedder.timeoutMs', env: 'MEMCORE_EMBED_TIMEOUT_MS', kind: 'int', help: `per request (${DEFAULTS.openaiEmbedder.timeoutMs})` },
  {
    key: 'embedder.maxRetries',
    env: 'MEMCORE_EMBED_MAX_RETRIES',
    kind: 'int',
    help: `on 429/5xx/connection errors (${DEFAULTS.openaiEmbedder.maxRetries})`,
  },
  {
    key: 'embedder.workers',
    env: 'MEMCORE_EMBED_WORKERS',
    kind: 'int',
    help: "local model: worker threads that share an ingest (the cores, at most 8; 1: the caller's thread only)",
  },
  {
    key: 'embedder.chunkTokens',
    env: 'MEMCORE_EMBED_CHUNK_TOKENS',
    kind: 'int',
    help: `long texts are chunked to this many tokens (${DEFAULTS.openaiEmbedder.chunkTokens}; local ${DEFAULTS.localEmbedder.chunkTokens})`,
  },
  {
    key: 'embedder.overlapTokens',
    env: 'MEMCORE_EMBED_OVERLAP_TOKENS',
    kind: 'int',
    help: `tokens shared by consecutive chunks (${DEFAULTS.openaiEmbedder.overlapTokens}; local ${DEFAULTS.localEmbedder.overlapTokens})`,
  },
  { key: 'llm.baseURL', env: 'MEMCORE_LLM_BASE_URL', kind: 'url', help: 'chat endpoint for the relevance filter' },
  { key: 'llm.apiKey', env: 'MEMCORE_LLM_API_KEY', kind: 'string', secret: true, help: 'bearer token (default OPENAI_API_KEY)' },
  { key: 'llm.model', env: 'MEMCORE_LLM_MODEL', kind: 'string', help: 'chat model; setting it enables --llm' },
  { key: 'llm.timeoutMs', env: 'MEMCORE_LLM_TIMEOUT_MS', kind: 'int', help: `relevance filter time budget (${DEFAULTS.llm.timeoutMs})` },
  { key: 'llm.maxRetries', env: 'MEMCORE_LLM_MAX_RETRIES', kind: 'int', help: `retries within the budget (${DEFAULTS.llm.maxRetries})` },
  {
    key: 'cache.ttlMs',
    env: 'MEMCORE_CACHE_TTL_MS',
    kind: 'int',
    default: DEFAULTS.cache.ttlMs,
    help: 'context cache lifetime; 0 turns it off',
  },
  { key: 'cache.max', env: 'MEMCORE_CACHE_MAX', kind: 'int', default: DEFAULTS.cache.max, help: 'context bundles kept' },
  {
    key: 'feedback.alpha',
    env: 'MEMCORE_FEEDBACK_ALPHA',
    kind: 'fraction',
    default: DEFAULTS.feedback.alpha,
    help: "weight of a new rating in an entry's effectiveness (moving average), from 0 to 1",
  },
  {
    key: 'feedback.halfLifeDays',
    env: 'MEMCORE_FEEDBACK_HALF_LIFE_DAYS',
    kind: 'int',
    default: DEFAULTS.feedback.halfLifeDays,
    help: 'days over which an effectiveness drifts halfway back to neutral without ratings',
  },
  {
    key: 'import.exclude',
    env: 'MEMCORE_IMPORT_EXCLUDE',
    kind: 'stringList',
    help: 'globs (.gitignore syntax) memcore import leaves out, with its --exclude ones; comma-separated in the env',
  },
  {
    key: 'gaps.log',
    env: 'MEMCORE_GAPS_LOG',
    kind: 'bool',
    default: true,
    help: 'log tasks memory could not answer (empty or low-confidence bundles) to gaps.jsonl',
  },
  {
    key: 'gaps.retentionDays',
    env: 'MEMCORE_GAPS_RETENTION_DAYS',
    kind: 'int',
    default: DEFAULTS.gaps.retentionDays,
    help: 'days a logged task is kept',
  },
];

export const CONFIG_FILES = ['memcore.config.json', 'memcore.config.yaml', 'memcore.config.yml'];

export type ConfigSource = 'option' | 'env' | 'default' | `file ${string}`;

export interface ResolvedConfig {
  /** Nested settings, e.g. `config.embedder.model`. */
  values: Record<string, unknown>;
  /** Where each set value came from, by dotted key. */
  sources: Record<string, ConfigSource>;
  /** The config file read, if any. */
  file: string | null;
}

function getPath(obj: unknown, key: string): unknown {
  return key.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

function setPath(obj: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let o = obj;
  for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
  o[parts.at(-1)!] = value;
}

/** Parses and checks one value; text (env) is converted, typed values (options, files) are checked. */
function coerce(s: Setting, raw: unknown, where: string): unknown {
  const fail = (what: string) => invalidInput(`${where}: ${s.key} ${what}, got ${JSON.stringify(raw)}`);
  const text = typeof raw === 'string' ? raw.trim() : undefined;
  const kind = s.kind;
  if (typeof kind === 'object') {
    if (typeof raw !== 'string' || !kind.enum.includes(text!)) throw fail(`must be one of ${kind.enum.join(', ')}`);
    return text;
  }
  switch (kind) {
    case 'string':
      if (typeof raw !== 'string' || text === '') throw fail('must be a non-empty string');
      return raw;
    case 'url':
      if (typeof raw !== 'string' || !/^https?:\/\/[^\s]+$/.test(text!)) throw fail('must be an http(s) URL');
      return text;
    case 'int': {
      const n = typeof raw === 'number' ? raw : text !== undefined && /^-?\d+$/.test(text) ? Number(text) : NaN;
      if (!Number.isInteger(n) || n < 0) throw fail('must be a whole number ≥ 0');
      return n;
    }
    case 'fraction': {
      const n = typeof raw === 'number' ? raw : text !== undefined && text !== '' ? Number(text) : NaN;
      if (!Number.isFinite(n) || n <= 0 || n > 1) throw fail('must be a number above 0 and at most 1');
      return n;
    }
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (text !== undefined && /^(1|true|yes|on)$/i.test(text)) return true;
      if (text !== undefined && /^(0|false|no|off)$/i.test(text)) return false;
      throw fail('must be true or false');
    case 'stringList': {
      const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',').map((x) => x.trim()) : null;
      if (!list || list.some((x) => typeof x !== 'string' || x.trim() === '')) throw fail('must be a list of non-empty strings');
      return list;
    }
    case 'intList': {
      const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',').map((x) => x.trim()) : null;
      const nums = list?.map((x) => (typeof x === 'number' ? x : /^\d+$/.test(String(x)) ? Number(x) : NaN));
      if (!nums || nums.length === 0 || nums.some((n) => !Number.isInteger(n) || n < 1))
        throw fail('must be a list of positive whole numbers');
      return nums;
    }
  }
}

function readConfigFile(dirs: string[]): { path: string; data: Record<string, unknown> } | null {
  for (const dir of dirs) {
    for (const name of CONFIG_FILES) {
      const path = join(dir, name);
      if (!existsSync(path)) continue;
      let data: unknown;
      try {
        const text = readFileSync(path, 'utf8');
        data = name.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
      } catch (e) {
        throw invalidInput(`${path}: cannot be parsed (${(e as Error).message.split('\n')[0]})`);
      }
      if (data === null || typeof data !== 'object' || Array.isArray(data)) throw invalidInput(`${path}: must hold an object of settings`);
      const known = new Set(SETTINGS.map((s) => s.key));
      const walk = (o: Record<string, unknown>, prefix: string): void => {
        for (const [k, v] of Object.entries(o)) {
          const key = prefix + k;
          if (v && typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>, `${key}.`);
          else if (!known.has(key)) throw invalidInput(`${path}: unknown setting "${key}"`);
        }
      };
      walk(data as Record<string, unknown>, '');
      return { path, data: data as Record<string, unknown> };
    }
  }
  return null;
}

/** Resolves every setting; throws INVALID_INPUT naming the first bad or missing one. */
export function resolveConfig(input: { options?: Record<string, unknown>; env?: NodeJS.ProcessEnv; cwd?: string } = {}): ResolvedConfig {
  const options = input.options ?? {};
  const env = input.env ?? process.env;
  const cwd = input.cwd ?? process.cwd();
  const dbHint = (getPath(options, 'db') as string | undefined) ?? env.MEMCORE_DB ?? '.memcore';
  const file = readConfigFile([resolve(cwd, dbHint), cwd]);
  const values: Record<string, unknown> = {};
  const sources: Record<string, ConfigSource> = {};
  for (const s of SETTINGS) {
    const fromOption = getPath(options, s.key);
    const fromEnv = env[s.env];
    const fromFile = file ? getPath(file.data, s.key) : undefined;
    let value: unknown;
    let source: ConfigSource | undefined;
    if (fromOption !== undefined) [value, source] = [coerce(s, fromOption, 'option'), 'option'];
    else if (fromEnv !== undefined && fromEnv !== '') [value, source] = [coerce(s, fromEnv, s.env), 'env'];
    else if (fromFile !== undefined) [value, source] = [coerce(s, fromFile, file!.path), `file ${file!.path}`];
    else if (s.default !== undefined) [value, source] = [s.default, 'default'];
    if (source) {
      setPath(values, s.key, value);
      sources[s.key] = source;
    }
  }
  const need = (key: string, why: string) => {
    if (getPath(values, key) === undefined) {
      const s = SETTINGS.find((x) => x.key === key)!;
      throw invalidInput(`${key} is required ${why} (set ${s.env}, the ${key} option or ${key} in memcore.config.json)`);
    }
  };
  if (getPath(values, 'embedder.provider') === 'openai') {
    need('embedder.model', 'when embedder.provider is openai');
    need('embedder.dimensions', 'when embedder.provider is openai');
  }
  if (getPath(values, 'llm.baseURL') !== undefined) need('llm.model', 'when llm.baseURL is set');
  return { values, sources, file: file?.path ?? null };
}

/** The settings as `key = value  (source)` lines, secrets masked. */
export function describeConfig(config: ResolvedConfig): { key: string; env: string; value: unknown; source: ConfigSource | 'unset' }[] {
  return SETTINGS.map((s) => {
    const value = getPath(config.values, s.key);
    const masked = s.secret && typeof value === 'string' ? (value.length <= 8 ? '****' : `${value.slice(0, 3)}…${value.slice(-2)}`) : value;
    return { key: s.key, env: s.env, value: masked ?? null, source: config.sources[s.key] ?? 'unset' };
  });
}
