import { describe, expect, it } from 'vitest';
import { entryFilterSql, sqlIn, sqlNumber, sqlString } from '../src/store/lance/filter.js';

describe('sqlString: the one escaping helper for LanceDB filters', () => {
  it('doubles single quotes', () => {
    expect(sqlString("o'brien")).toBe("'o''brien'");
    expect(sqlString("'; DROP TABLE entries; --")).toBe("'''; DROP TABLE entries; --'");
  });
  it('keeps backslashes literal (DataFusion strings have no backslash escapes)', () => {
    expect(sqlString('C:\\path\\')).toBe("'C:\\path\\'");
    expect(sqlString("\\'")).toBe("'\\'''");
  });
  it('passes unicode through unchanged', () => {
    expect(sqlString('日本語-ключ-🔑')).toBe("'日本語-ключ-🔑'");
    expect(sqlString('é\u2028x')).toBe("'é\u2028x'");
  });
  it('refuses NUL and non-strings', () => {
    expect(() => sqlString('a\u0000b')).toThrow(/NUL/);
    expect(() => sqlString(42 as unknown as string)).toThrow(/must be a string/);
  });
  it('refuses non-finite numbers', () => {
    expect(sqlNumber(1.5)).toBe('1.5');
    expect(() => sqlNumber(Number.NaN)).toThrow(/finite/);
    expect(() => sqlNumber(Infinity)).toThrow(/finite/);
  });
  it('an empty IN list matches nothing', () => {
    expect(sqlIn('id', [])).toBe('false');
    expect(sqlIn('id', ["a'b", 'c'])).toBe("id IN ('a''b', 'c')");
  });
  it('builds every pushed-down filter through the helper', () => {
    const sql = entryFilterSql({
      cores: ["co'r"],
      entryTypes: ['lesson'],
      minConfidence: 'medium',
      tags: ['t\\1'],
      sensitivity: ['public'],
      validAt: new Date(1000),
    });
    expect(sql).toBe(
      "(core_id IN ('co''r')) AND (entry_type IN ('lesson')) AND (confidence_rank >= 2) AND " +
        "(array_has_any(tags, ['t\\1'])) AND (sensitivity IN ('public')) AND " +
        '(COALESCE(valid_from, created_at) <= 1000 AND (valid_to IS NULL OR valid_to > 1000))',
    );
    expect(entryFilterSql({})).toBeUndefined();
    expect(entryFilterSql({ notIds: ["x'); --", 'ü\\'] })).toBe("(NOT (id IN ('x''); --', 'ü\\')))");
    expect(entryFilterSql({ notIds: [] })).toBeUndefined();
    expect(entryFilterSql({ notEntryTypes: ['retraction', "it's"] })).toBe("(NOT (entry_type IN ('retraction', 'it''s')))");
    expect(entryFilterSql({ notEntryTypes: [] })).toBeUndefined();
  });
});
