/**
 * Opening a folder: options and configuration resolved into an embedder and stores, and the
 * stores open in this process, by folder. Kuzu lets one Database object own a file: engines on
 * the same folder share it (and see each other's writes at once); it closes with the last engine.
 */
import { resolve } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { LOCAL_EMBEDDER_OPTIONS, localEmbedder } from '../embed/localEmbedder.js';
import { OPENAI_EMBEDDER_OPTIONS, openAIEmbedder, type OpenAIEmbedderOptions } from '../embed/openaiEmbedder.js';
import { invalidInput, MemcoreError } from '../model/errors.js';
import { checkOptionNames } from '../model/options.js';
import { Stores } from '../store/stores.js';
import { leaveSnapshotsCurrent } from '../ops/freshSnapshots.js';
import type { GraphDriverName } from '../store/graph/drivers.js';
import { CACHE_OPTIONS, type ContextCacheOptions } from '../cache/contextCache.js';
import { resolveConfig } from '../config/config.js';
import { LLM_OPTIONS, type JsonChat, type LlmOptions } from '../llm/chatClient.js';
import type { GapLogOptions } from '../feedback/gapLog.js';
import { findTeamPaths, type TeamPaths } from '../team/teamPaths.js';
import { OPEN_MEMORY_OPTIONS, type EmbedderConfig, type OpenMemoryOptions } from './engineOptions.js';

export const openStores = new Map<string, { stores: Promise<Stores>; engines: number }>();

/** The Embedder an EmbedderConfig names (reembed), checked as openMemory checks it. */
export function embedderFrom(config: EmbedderConfig): Embedder {
  if (config && typeof config === 'object' && 'embed' in config) return config;
  if (!config || typeof config !== 'object' || (config.provider !== 'local' && config.provider !== 'openai'))
    throw invalidInput("reembed needs an Embedder, { provider: 'local' } or { provider: 'openai', … }");
  if (config.provider === 'local') {
    checkOptionNames('reembed.embedder', config, ['provider', ...LOCAL_EMBEDDER_OPTIONS]);
    const { provider: _local, ...options } = config;
    return localEmbedder(options);
  }
  checkOptionNames('reembed.embedder', config, ['provider', ...OPENAI_EMBEDDER_OPTIONS]);
  const { provider: _provider, ...options } = config;
  return openAIEmbedder(options);
}

/** The embedder the configuration's `embedder` settings name (nothing is loaded until it embeds). */
function embedderOfSettings(settings: ConfigValues['embedder']): Embedder {
  const { provider, ...embedderSettings } = settings;
  const { chunkTokens, overlapTokens, workers, batchSize, ...openaiSettings } = embedderSettings as typeof embedderSettings & {
    workers?: number;
  };
  return provider === 'openai'
    ? openAIEmbedder({
        ...openaiSettings,
        ...(chunkTokens !== undefined ? { chunkTokens } : {}),
        ...(overlapTokens !== undefined ? { overlapTokens } : {}),
        ...(batchSize !== undefined ? { batchSize } : {}),
      } as OpenAIEmbedderOptions)
    : localEmbedder({
        ...(chunkTokens !== undefined ? { chunkTokens } : {}),
        ...(overlapTokens !== undefined ? { overlapTokens } : {}),
        ...(workers !== undefined ? { workers } : {}),
        ...(batchSize !== undefined ? { batchSize } : {}),
      });
}

/** The embedder memcore's configuration (MEMCORE_*, memcore.config, defaults) names for `cwd`: what `doctor --repair` rebuilds a meta with. */
export function configuredEmbedder(cwd?: string): Embedder {
  return embedderOfSettings((resolveConfig({ cwd }).values as unknown as ConfigValues).embedder);
}

interface ConfigValues {
  db: string;
  repo?: string;
  memory?: { dir?: string; embedWaitMs?: number };
  smallDimensions?: number;
  graph: GraphDriverName;
  residentMaxEntries: number;
  scanMaxEntries: number;
  scanThreadMinEntries: number;
  embedder: { provider: 'local' | 'openai' } & Partial<OpenAIEmbedderOptions>;
  llm?: Partial<LlmOptions>;
  cache: ContextCacheOptions;
  gaps: { log: boolean; retentionDays: number };
  feedback: { alpha: number; halfLifeDays: number };
}

export async function releaseStores(dir: string): Promise<void> {
  const shared = openStores.get(dir);
  if (!shared || --shared.engines > 0) return;
  openStores.delete(dir);
  const stores = await shared.stores.catch(() => undefined);
  // A process that wrote leaves the snapshots a fresh reader needs (best effort: a reader builds what is missing).
  if (stores?.residents.wrote) await leaveSnapshotsCurrent(stores, { all: stores.residents.bulkWrote }).catch(() => undefined);
  await stores?.close();
}

/**
 * What openMemory opens: options checked, the configuration resolved (options, then MEMCORE_*,
 * then memcore.config, then defaults), the embedder made, and the folder's stores, shared with
 * the engines already open on it in this process.
 */
export async function openEngineParts(options: OpenMemoryOptions): Promise<{
  stores: Stores;
  embedder: Embedder;
  settings: { cache: ContextCacheOptions; llm?: LlmOptions | JsonChat; gaps: GapLogOptions; repo?: string };
  team?: TeamPaths;
  /** config memory.embedWaitMs (team/teamFolder.ts). */
  teamEmbedWaitMs?: number;
}> {
  checkOptionNames('openMemory', options, OPEN_MEMORY_OPTIONS);
  checkOptionNames('openMemory.cache', options.cache, CACHE_OPTIONS);
  const embedderOption = options.embedder;
  if (embedderOption && !('embed' in embedderOption)) {
    checkOptionNames(
      'openMemory.embedder',
      embedderOption,
      embedderOption.provider === 'openai' ? ['provider', ...OPENAI_EMBEDDER_OPTIONS] : ['provider', ...LOCAL_EMBEDDER_OPTIONS],
    );
  }
  if (options.llm && !('completeJson' in options.llm)) checkOptionNames('openMemory.llm', options.llm, LLM_OPTIONS);
  const embedderObject = options.embedder && 'embed' in options.embedder ? options.embedder : undefined;
  const chatObject = options.llm && 'completeJson' in options.llm ? options.llm : undefined;
  // An Embedder object replaces every embedder setting, so the environment's are not consulted.
  const env = embedderObject
    ? Object.fromEntries(Object.entries(options.env ?? process.env).filter(([k]) => !k.startsWith('MEMCORE_EMBED')))
    : options.env;
  const { values } = resolveConfig({
    options: {
      db: options.path,
      embedder: embedderObject ? undefined : options.embedder,
      llm: chatObject ? undefined : options.llm,
      cache: options.cache,
      smallDimensions: options.smallDimensions,
      graph: options.graph,
      residentMaxEntries: options.residentMaxEntries,
      scanMaxEntries: options.scanMaxEntries,
      scanThreadMinEntries: options.scanThreadMinEntries,
      repo: options.repo,
      ...(typeof options.memoryDir === 'string' ? { memory: { dir: options.memoryDir } } : {}),
    },
    env,
    cwd: options.cwd,
  });
  const config = values as unknown as ConfigValues;
  const embedder = embedderObject ?? embedderOfSettings(config.embedder);
  const llm = chatObject ?? (config.llm?.model ? (config.llm as LlmOptions) : undefined);
  const dir = resolve(options.cwd ?? process.cwd(), config.db);
  let shared = openStores.get(dir);
  if (!shared) {
    const { smallDimensions, graph, residentMaxEntries, scanMaxEntries, scanThreadMinEntries, feedback } = config;
    shared = {
      stores: Stores.open(dir, embedder, {
        smallDimensions,
        graph,
        residentMaxEntries,
        scanMaxEntries,
        scanThreadMinEntries,
        effectiveness: feedback,
      }),
      engines: 0,
    };
    openStores.set(dir, shared);
    shared.stores.catch(() => openStores.delete(dir));
  }
  shared.engines++;
  let stores: Stores;
  try {
    stores = await shared.stores;
    if (stores.meta.embedder.id !== embedder.id) {
      throw new MemcoreError(
        `${dir} is open with embedder ${stores.meta.embedder.id}; it cannot be opened with ${embedder.id}`,
        'MODEL_MISMATCH',
      );
    }
  } catch (e) {
    await releaseStores(dir);
    throw e;
  }
  const repo = config.repo === undefined ? undefined : resolve(options.cwd ?? process.cwd(), config.repo);
  const team = options.memoryDir === false ? undefined : findTeamPaths(dir, config.memory?.dir, options.cwd ?? process.cwd());
  return {
    ...(team ? { team, ...(config.memory?.embedWaitMs !== undefined ? { teamEmbedWaitMs: config.memory.embedWaitMs } : {}) } : {}),
    stores,
    embedder,
    settings: {
      cache: config.cache,
      ...(llm ? { llm } : {}),
      gaps: { enabled: config.gaps.log, retentionDays: config.gaps.retentionDays },
      ...(repo ? { repo } : {}),
    },
  };
}
