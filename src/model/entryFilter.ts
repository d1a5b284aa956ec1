import type { Confidence, Sensitivity } from './types.js';

/**
 * Entry types that are records about other entries, never knowledge in effect: the `retraction`
 * ("Retired: <title>") that `forget` leaves. Searches and bundles never take them as candidates;
 * `getEntries`, export and `list --type retraction` still read them (engine/visibility.ts).
 */
export const RECORD_ENTRY_TYPES: readonly string[] = ['retraction'];

/**
 * What a read may ask of the entries it returns. One type for every layer: the query path builds
 * it, the stores apply it (LanceDB as a pushed-down filter, the resident columns as a test per slot).
 */
export interface EntryFilter {
  /** Only these memory cores. */
  cores?: readonly string[];
  /** Only these entry types. */
  entryTypes?: readonly string[];
  /** None of these entry types (the records that are never in effect: engine/visibility.ts). */
  notEntryTypes?: readonly string[];
  /** At least this confidence. */
  minConfidence?: Confidence;
  /** At least one of these tags. */
  tags?: readonly string[];
  /** Only these sensitivity levels. */
  sensitivity?: readonly Sensitivity[];
  /**
   * Only entries in force at this time: in effect from `valid_from`, or from `created_at` when it
   * has none, until `valid_to` (excluded).
   */
  validAt?: Date;
  /** Importance at least this (1–10). */
  minImportance?: number;
  /** Created at or after this time. */
  createdAfter?: Date;
  /** Created before this time. */
  createdBefore?: Date;
  /** Only these ids. */
  ids?: readonly string[];
  /** None of these ids. */
  notIds?: readonly string[];
}
