/**
 * The options of the reads that are not searches, checked with the same checks as a search's
 * (model/optionChecks.ts) and given their defaults (config/defaults.ts) in one step: a method
 * gets back what it runs with, or an OptionError saying `{ option, got, allowed }`.
 */
import { DEFAULTS } from '../config/defaults.js';
import type { EntryFilter } from '../model/entryFilter.js';
import { checkOptionNames } from '../model/options.js';
import { abortSignal, callback, flag, int, listOf, nonEmptyString, oneOf, refuse, wholeNumber } from '../model/optionChecks.js';
import { checkId } from '../model/ids.js';
import { ENTRY_EDGE_TYPES, type EntryEdgeType, type Sensitivity } from '../model/types.js';
import type { Direction } from '../store/graph/graphStore.js';
import {
  checkSearchOption,
  resolveFilter,
  resolveSensitivity,
  SEARCH_FILTER_OPTIONS,
  type SearchFilterOptions,
} from '../recipe/searchOptions.js';
import type { EntryGraphQuery } from './entryGraph.js';
import {
  FIND_CODE_OPTIONS,
  INDEX_OPTIONS,
  RELATED_TO_CODE_OPTIONS,
  SENSITIVITY_OPTION,
  TRAVERSE_OPTIONS,
  type FindCodeOptions,
  type IndexOptions,
  type RelatedToCodeOptions,
  type SensitivityOption,
  type TraverseOptions,
} from './engineOptions.js';

const R = DEFAULTS.reads;
const DIRECTIONS: readonly Direction[] = ['outgoing', 'incoming', 'both'];

/** Checks `v` with `check` unless undefined, and returns it or the default. */
function valueOr<T>(
  check: (name: string, v: unknown, path?: string) => void,
  where: string,
  name: string,
  v: T | undefined,
  fallback: T,
): T {
  if (v === undefined) return fallback;
  check(name, v, `${where}.${name}`);
  return v;
}

export interface ListOptions extends SearchFilterOptions {
  /** Entries at most. Default 100, at most 10,000. */
  limit?: number;
  /** Entries skipped first, in the listing's order. Default 0. */
  offset?: number;
}

export function listOptions(o: ListOptions): { filter: EntryFilter; limit: number; offset: number } {
  checkOptionNames('listEntries', o, [...SEARCH_FILTER_OPTIONS, 'limit', 'offset']);
  return {
    filter: resolveFilter(o),
    limit: valueOr(int(1, R.listMaxLimit), 'listEntries', 'limit', o.limit, R.listLimit),
    offset: valueOr(wholeNumber, 'listEntries', 'offset', o.offset, 0),
  };
}

export function coreMemoryOptions(o: { maxTokens?: number }): { maxTokens: number } {
  checkOptionNames('coreMemory', o, ['maxTokens']);
  return { maxTokens: valueOr(int(1, 1_000_000), 'coreMemory', 'maxTokens', o.maxTokens, R.coreMemoryTokens) };
}

export function sensitivityOf(where: string, o: SensitivityOption): Sensitivity[] {
  checkOptionNames(where, o, SENSITIVITY_OPTION);
  return resolveSensitivity(o.sensitivity);
}

interface TraverseSettings {
  depth: number;
  edgeTypes: EntryEdgeType[];
  direction: Direction;
  sensitivity: Sensitivity[];
}

export function traverseOptions(o: TraverseOptions): TraverseSettings {
  checkOptionNames('traverse', o, TRAVERSE_OPTIONS);
  const edgeTypes = o.relationTypes ?? [...ENTRY_EDGE_TYPES];
  listOf(oneOf(ENTRY_EDGE_TYPES), ENTRY_EDGE_TYPES.join(', '))('relationTypes', edgeTypes, 'traverse.relationTypes');
  return {
    depth: valueOr(int(1, R.traverseMaxDepth), 'traverse', 'depth', o.depth, R.traverseDepth),
    edgeTypes,
    direction: valueOr(oneOf(DIRECTIONS), 'traverse', 'direction', o.direction, 'both'),
    sensitivity: resolveSensitivity(o.sensitivity),
  };
}

export function entryGraphOptions(
  query: EntryGraphQuery,
  options: SensitivityOption,
): { maxNodes: number; depth: number; sensitivity: Sensitivity[] } {
  if (typeof query !== 'object' || query === null || Array.isArray(query))
    refuse('entryGraph', query, ['{ focus, depth, maxNodes }', '{ core, maxNodes }'], 'entryGraph needs { focus } or { core }');
  const focused = 'focus' in query;
  checkOptionNames('entryGraph', query, focused ? ['focus', 'depth', 'maxNodes'] : ['core', 'maxNodes']);
  const depth = focused ? query.depth : undefined;
  return {
    maxNodes: valueOr(int(1, R.entryGraphMaxNodes), 'entryGraph', 'maxNodes', query.maxNodes, R.entryGraphNodes),
    depth: valueOr(int(1, R.entryGraphMaxDepth), 'entryGraph', 'depth', depth, R.entryGraphDepth),
    sensitivity: sensitivityOf('entryGraph options', options),
  };
}

export function relatedToCodeOptions(o: RelatedToCodeOptions): {
  limit: number;
  sensitivity: Sensitivity[];
  signal: AbortSignal | undefined;
} {
  checkOptionNames('findRelatedToCode', o, RELATED_TO_CODE_OPTIONS);
  return {
    limit: valueOr((name, v) => checkSearchOption('limit', v, name), 'findRelatedToCode', 'limit', o.limit, R.limit),
    sensitivity: resolveSensitivity(o.sensitivity),
    signal: valueOr(abortSignal, 'findRelatedToCode', 'signal', o.signal, undefined),
  };
}

export function findCodeOptions(o: FindCodeOptions): {
  limit: number;
  codebases: string[] | undefined;
  entries: boolean;
  sensitivity: Sensitivity[];
  signal: AbortSignal | undefined;
} {
  checkOptionNames('findCode', o, FIND_CODE_OPTIONS);
  const C = DEFAULTS.codeSearch;
  const codebases = valueOr(listOf(nonEmptyString, 'codebase names'), 'findCode', 'codebases', o.codebases, undefined);
  codebases?.forEach((c, i) => checkId(`findCode: codebases[${i}]`, c));
  return {
    limit: valueOr(int(1, C.maxLimit), 'findCode', 'limit', o.limit, C.limit),
    codebases,
    entries: valueOr(flag, 'findCode', 'entries', o.entries, true),
    sensitivity: resolveSensitivity(o.sensitivity),
    signal: valueOr(abortSignal, 'findCode', 'signal', o.signal, undefined),
  };
}

export function indexOptions(o: IndexOptions): { annMinRows: number; onProgress: ((message: string) => void) | undefined } {
  checkOptionNames('index', o, INDEX_OPTIONS);
  return {
    annMinRows: valueOr(wholeNumber, 'index', 'annMinRows', o.annMinRows, DEFAULTS.store.annMinRows),
    onProgress: valueOr(callback, 'index', 'onProgress', o.onProgress, undefined),
  };
}

/** `gaps`' `since`: a valid Date or nothing. */
export function gapsOptions(o: { since?: Date }): { since: Date | undefined } {
  checkOptionNames('gaps', o, ['since']);
  if (o.since !== undefined && !(o.since instanceof Date && Number.isFinite(o.since.getTime())))
    refuse('gaps.since', o.since, ['a valid Date'], 'gaps: since must be a valid Date');
  return { since: o.since };
}
