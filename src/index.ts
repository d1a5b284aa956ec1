export { openMemory, MemoryEngine } from './engine/memoryEngine.js';
export type {
  OpenMemoryOptions, EmbedderConfig, SemanticSearchOptions, MatryoshkaSearchOptions, KeywordSearchOptions, HybridSearchOptions,
  TraverseOptions, SearchHit, TraverseHit, RelatedToCodeHit, CodeReferenceHit,
} from './engine/memoryEngine.js';
export type { TaskContextOptions, SearchFilterOptions } from './retrieve/taskContext.js';
export type { ScoringWeights } from './retrieve/score.js';
export { DEFAULT_WEIGHTS } from './retrieve/score.js';
export type { IngestReport, IngestOptions } from './ingest/indexer.js';
export type { AutoLinkOptions } from './ingest/autoLink.js';
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
export type { EntryRecord, CodeLocationRecord, GoldenPathRecord, GoldenPathStepRecord, RelationRecord, MemoryDocumentRecord } from './model/memoryFile.js';
export { memoryTools } from './server/agentTools.js';
export type { MemoryTools, MemoryToolsOptions, MemoryToolName, FunctionTool } from './server/agentTools.js';
