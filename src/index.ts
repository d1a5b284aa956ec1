export { openMemory, MemoryEngine } from './engine/memoryEngine.js';
export type {
  OpenMemoryOptions,
  EmbedderConfig,
  SemanticSearchOptions,
  MatryoshkaSearchOptions,
  KeywordSearchOptions,
  HybridSearchOptions,
  TraverseOptions,
  TraverseHit,
  RelatedToCodeHit,
  CodeReferenceHit,
  FindCodeOptions,
  FeedbackInput,
  IndexOptions,
  IndexResult,
} from './engine/memoryEngine.js';
export type { TaskContextOptions } from './retrieve/taskContext.js';
export type { CodeSearchHit } from './model/types.js';
export type { MemoryFolderStatus } from './engine/memoryEngine.js';
export type { TeamSyncReport } from './team/teamFolder.js';
export type { FileProblem } from './team/entryFile.js';
export { memoryDiff, formatMemoryDiff, type MemoryDiff, type DiffItem } from './team/memoryDiff.js';
export { initTeamFolder, type TeamInit } from './team/initTeam.js';
export type { SearchFilterOptions, SearchOptions } from './recipe/searchOptions.js';
export { pagerank, proximity } from './retrieve/graphRanker.js';
export type { GraphRanker, GraphRankInput } from './retrieve/graphRanker.js';
export type {
  SearchRecipe,
  PresetName,
  VectorSource,
  VectorStage1,
  RecipeSources,
  RecipeFusion,
  RecipeExpansion,
  RecipeScoring,
  Reranker,
  RecipeReranker,
} from './recipe/searchRecipe.js';
export { llmRelevance } from './llm/relevanceFilter.js';
export { PRESET_NAMES } from './recipe/searchRecipe.js';
export { withOverrides, presetOptions } from './recipe/presets.js';
export type { ScoringWeights } from './retrieve/score.js';
export { DEFAULT_WEIGHTS } from './retrieve/score.js';
export type { IngestReport, IngestOptions } from './ingest/indexer.js';
export type { AutoLinkOptions } from './ingest/autoLink.js';
export type { ImportMarkdownOptions, ImportReport } from './import/importMarkdown.js';
export type { ImportCodeOptions, ImportCodeReport } from './import/importCode.js';
export { extractCode, languageOf } from './code/languages/index.js';
export type { Extraction, ImportRef } from './code/languages/index.js';
export type { CodeSymbol } from './import/codeSymbols.js';
export type { CheckCodeOptions, CheckReport, CodeProblem } from './code/checkCode.js';
export type { Freshness } from './code/codeFreshness.js';
export type { DiffSource, DiffContextBundle } from './code/contextForDiff.js';
export type { GapGroup, GapRecord } from './feedback/gapLog.js';
export type { FeedbackSignal, EffectivenessOptions } from './feedback/effectiveness.js';
export { parseDiff } from './code/parseDiff.js';
export type { ParsedDiff, ChangedFile, FileChange } from './code/parseDiff.js';
export type { SyncReport } from './ingest/syncSource.js';
export type { Embedder } from './embed/embedder.js';
export { localEmbedder } from './embed/localEmbedder.js';
export type { LocalEmbedderOptions } from './embed/localEmbedder.js';
export { openAIEmbedder } from './embed/openaiEmbedder.js';
export type { OpenAIEmbedderOptions } from './embed/openaiEmbedder.js';
export { formatBundle } from './format/formatBundle.js';
export { formatContext, PROMPT_HEADER } from './format/formatContext.js';
export type { FormatContextOptions, ContextStyle } from './format/formatContext.js';
export { neutralize, isInstructionLike } from './format/neutralize.js';
export { openAIChat } from './llm/chatClient.js';
export type { LlmOptions, JsonChat, ChatMessage } from './llm/chatClient.js';
export type { RelevanceFilterOptions } from './llm/relevanceFilter.js';
export { resolveConfig, describeConfig, SETTINGS } from './config/config.js';
export type { ResolvedConfig, ConfigSource } from './config/config.js';
export { chunkText, approxTokens } from './embed/chunkText.js';
export type { ChunkOptions } from './embed/chunkText.js';
export type { ContextCacheOptions } from './cache/contextCache.js';
export type { FusionOptions, FusionMethod } from './retrieve/fuse.js';
export type { Direction } from './store/graph/graphStore.js';
export { sqlString } from './store/lance/filter.js';
export { MemcoreError, MemoryFileError } from './model/errors.js';
export type { CodeReferenceQuery } from './store/graph/graphStore.js';
export * from './model/types.js';
export type { RememberInput, RememberResult, CodeReferenceInput, EntryLink } from './engine/remember.js';
export type { EntryDetails } from './engine/entryDetails.js';
export type { EntryGraph, EntryGraphNode, EntryGraphQuery } from './engine/entryGraph.js';
export type {
  EntryRecord,
  CodeLocationRecord,
  GoldenPathRecord,
  GoldenPathStepRecord,
  RelationRecord,
  MemoryDocumentRecord,
} from './model/memoryFile.js';
export { memoryTools } from './server/agentTools.js';
export type { MemoryTools, MemoryToolsOptions, MemoryToolName, FunctionTool } from './server/agentTools.js';
export { serializeMemoryDocument } from './ops/export.js';
export type { ExportFormat } from './ops/export.js';
export { restoreMemory } from './ops/restore.js';
export type { RestoreOptions } from './ops/restore.js';
export type { BackupManifest } from './ops/backup.js';
export { doctor as doctorMemory } from './ops/doctor.js';
export type { DoctorReport, Finding } from './ops/doctor.js';
export type { ReembedReport } from './ops/reembed.js';
export { migrateGraph } from './ops/migrateGraph.js';
export type { MigrateGraphReport } from './ops/migrateGraph.js';
export { GRAPH_DRIVERS, type GraphDriverName } from './store/graph/drivers.js';
