/**
 * The one place that turns values into LanceDB (DataFusion SQL) filter text. Every user value
 * that reaches a `where()` goes through `sqlString`/`sqlNumber`; column names come only from code.
 */
import type { EntryFilter } from '../../model/entryFilter.js';
import { invalidInput } from '../../model/errors.js';
import { CONFIDENCE_LEVELS, type Confidence } from '../../model/types.js';

/**
 * A single-quoted SQL string literal. Quotes are doubled; backslashes are literal in DataFusion
 * strings, so they pass as they are. NUL cannot be represented and is refused.
 */
export function sqlString(value: string): string {
  if (typeof value !== 'string') throw invalidInput(`filter value must be a string, got ${typeof value}`);
  if (value.includes('\u0000')) throw invalidInput('filter values cannot contain the NUL character');
  return `'${value.replace(/'/g, "''")}'`;
}

export function sqlNumber(value: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalidInput(`filter value must be a finite number, got ${String(value)}`);
  return String(value);
}

/** `column IN ('a', 'b')`; an empty list matches nothing. */
export function sqlIn(column: string, values: readonly string[]): string {
  if (values.length === 0) return 'false';
  return `${column} IN (${values.map(sqlString).join(', ')})`;
}

/** Joins the non-empty parts with AND; undefined when there is nothing to filter on. */
export function sqlAnd(parts: (string | undefined | null)[]): string | undefined {
  const kept = parts.filter((p): p is string => !!p);
  return kept.length === 0 ? undefined : kept.map((p) => `(${p})`).join(' AND ');
}

export function confidenceRank(c: Confidence): number {
  return CONFIDENCE_LEVELS.indexOf(c) + 1;
}

export type { EntryFilter };

export function entryFilterSql(f: EntryFilter): string | undefined {
  const t = f.validAt ? sqlNumber(f.validAt.getTime()) : undefined;
  return sqlAnd([
    f.ids ? sqlIn('id', f.ids) : undefined,
    f.notIds && f.notIds.length > 0 ? `NOT (${sqlIn('id', f.notIds)})` : undefined,
    f.cores ? sqlIn('core_id', f.cores) : undefined,
    f.entryTypes ? sqlIn('entry_type', f.entryTypes) : undefined,
    f.notEntryTypes && f.notEntryTypes.length > 0 ? `NOT (${sqlIn('entry_type', f.notEntryTypes)})` : undefined,
    f.minConfidence ? `confidence_rank >= ${confidenceRank(f.minConfidence)}` : undefined,
    f.tags ? (f.tags.length === 0 ? 'false' : `array_has_any(tags, [${f.tags.map(sqlString).join(', ')}])`) : undefined,
    f.sensitivity ? sqlIn('sensitivity', f.sensitivity) : undefined,
    t ? `COALESCE(valid_from, created_at) <= ${t} AND (valid_to IS NULL OR valid_to > ${t})` : undefined,
    f.minImportance !== undefined ? `importance >= ${sqlNumber(f.minImportance)}` : undefined,
    f.createdAfter ? `created_at >= ${sqlNumber(f.createdAfter.getTime())}` : undefined,
    f.createdBefore ? `created_at < ${sqlNumber(f.createdBefore.getTime())}` : undefined,
  ]);
}
