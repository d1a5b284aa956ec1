/**
 * Whether a code location still points at the code it was written for:
 * - fresh: the same text at the same place;
 * - moved: the same text, or the same symbol, found elsewhere (other lines, another file);
 * - drifted: the symbol (or the lines) is there, but its text changed;
 * - orphaned: the file or the symbol is gone.
 * The text is compared through the location's fingerprint (whitespace-insensitive); a location
 * without one can be found moved or orphaned, never drifted.
 */
import type { CodeLocation, CodeReference } from '../model/types.js';
import type { CodeSymbol } from '../import/codeSymbols.js';
import { linesFingerprint, symbolsOf, type CodeIndex, type IndexedFile, type SymbolHit } from './codeIndex.js';

export type Freshness = NonNullable<CodeReference['freshness']>;

export interface CodeFreshness {
  status: Freshness;
  /** Where the code is now (moved; drifted: the symbol's current lines). */
  now?: { filePath: string; symbol: string | null; startLine: number; endLine: number };
  /** One line for a person: what was compared and what differs. */
  detail: string;
}

const span = (c: { startLine: number | null; endLine: number | null }) =>
  c.startLine === null ? 'the file' : `lines ${c.startLine}-${c.endLine ?? c.startLine}`;

function moved(hit: SymbolHit, detail: string): CodeFreshness {
  const { symbol } = hit;
  return {
    status: 'moved',
    now: { filePath: hit.filePath, symbol: symbol.symbol, startLine: symbol.startLine, endLine: symbol.endLine },
    detail,
  };
}

/** Lines added and removed in a symbol since its fingerprint's commit: `+3 −1 lines since 1a2b3c4`. */
async function changeSince(code: CodeLocation, now: CodeSymbol, file: IndexedFile, index: CodeIndex): Promise<string | null> {
  const old = await index.atRevision(code.revision!, code.filePath);
  if (old === null) return null;
  const symbols = (await symbolsOf(code.filePath, old)) ?? [];
  const then =
    symbols.find((s) => s.symbol === code.symbol && s.fingerprint === code.fingerprint) ?? symbols.find((s) => s.symbol === code.symbol);
  if (!then) return null;
  const before = old.split('\n').slice(then.startLine - 1, then.endLine);
  const after = file.lines.slice(now.startLine - 1, now.endLine);
  const same = commonLines(before, after);
  return `+${after.length - same} −${before.length - same} lines since ${code.revision!.slice(0, 7)}`;
}

/** Length of the longest common subsequence of two line lists (trimmed lines compared). */
function commonLines(a: string[], b: string[]): number {
  const x = a.map((l) => l.trim());
  const y = b.map((l) => l.trim());
  // Past 4M cells (two 2,000-line symbols) a count of shared lines stands in for the subsequence.
  if (x.length * y.length > 4_000_000) {
    const pool = new Map<string, number>();
    for (const l of x) pool.set(l, (pool.get(l) ?? 0) + 1);
    return y.reduce((n, l) => ((pool.get(l) ?? 0) > 0 ? (pool.set(l, pool.get(l)! - 1), n + 1) : n), 0);
  }
  let previous = new Uint32Array(y.length + 1);
  for (const line of x) {
    const row = new Uint32Array(y.length + 1);
    for (let j = 1; j <= y.length; j++) row[j] = line === y[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, row[j - 1]!);
    previous = row;
  }
  return previous[y.length]!;
}

/** Lines of the same length as the location's whose text has its fingerprint, nearest first. */
function findWindow(file: IndexedFile, code: CodeLocation): { startLine: number; endLine: number } | null {
  if (code.startLine === null || !code.fingerprint) return null;
  const length = (code.endLine ?? code.startLine) - code.startLine;
  let best: number | null = null;
  for (let start = 1; start + length <= file.lines.length; start++) {
    if (linesFingerprint(file.lines, start, start + length) !== code.fingerprint) continue;
    if (best === null || Math.abs(start - code.startLine) < Math.abs(best - code.startLine)) best = start;
  }
  return best === null ? null : { startLine: best, endLine: best + length };
}

/** Where a location's symbol went when it is not in its file: its text elsewhere, else its name if only one file has it. */
async function lookElsewhere(code: CodeLocation, index: CodeIndex): Promise<CodeFreshness | null> {
  const { byFingerprint, bySymbol } = await index.everywhere();
  const sameText = code.fingerprint ? (byFingerprint.get(code.fingerprint) ?? []) : [];
  if (sameText.length > 0) {
    const hit = sameText.find((h) => h.symbol.symbol === code.symbol) ?? sameText[0]!;
    return moved(hit, `the same text is now ${hit.filePath}#${hit.symbol.symbol}`);
  }
  if (!code.symbol) return null;
  const sameName = (bySymbol.get(code.symbol) ?? []).filter((h) => h.filePath !== code.filePath);
  if (sameName.length === 1) {
    const hit = sameName[0]!;
    return moved(hit, `${code.symbol} is now in ${hit.filePath}${code.fingerprint ? ', and its text changed' : ''}`);
  }
  return null;
}

/** Classifies one location against the files under the index's root. */
export async function codeFreshness(code: CodeLocation, index: CodeIndex): Promise<CodeFreshness> {
  if (!index.pathOf(code.filePath)) return { status: 'orphaned', detail: `${code.filePath} is not a path inside ${index.root}` };
  const outside = await index.leavesRoot(code.filePath);
  if (outside !== null)
    return { status: 'orphaned', detail: `${code.filePath} is a symlink to ${outside}, outside ${index.root}: its target was not read` };
  const file = await index.file(code.filePath);
  if (!file) return (await lookElsewhere(code, index)) ?? { status: 'orphaned', detail: `${code.filePath} is gone` };

  // A file's own location (import-code) holds while the file is there.
  if (code.kind === 'file') return { status: 'fresh', detail: `${code.filePath} is there` };

  const sameLinesText =
    code.fingerprint &&
    code.startLine !== null &&
    linesFingerprint(file.lines, code.startLine, code.endLine ?? code.startLine) === code.fingerprint;
  if (code.symbol && file.symbols) {
    const found = file.symbols.find((s) => s.symbol === code.symbol);
    if (found) {
      const now = { filePath: code.filePath, symbol: found.symbol, startLine: found.startLine, endLine: found.endLine };
      const sameText = !code.fingerprint || found.fingerprint === code.fingerprint || sameLinesText;
      const samePlace =
        code.startLine === null || (found.startLine === code.startLine && found.endLine === (code.endLine ?? code.startLine));
      if (!sameText) {
        const since = code.revision ? await changeSince(code, found, file, index) : null;
        return {
          status: 'drifted',
          now,
          detail: `${code.symbol} changed: ${span(code)} then, ${span(found)} now${since ? `; ${since}` : ''}`,
        };
      }
      return samePlace
        ? { status: 'fresh', detail: `${code.symbol} is at ${span(found)}` }
        : { status: 'moved', now, detail: `${code.symbol} moved from ${span(code)} to ${span(found)}` };
    }
    const renamed = code.fingerprint ? file.symbols.find((s) => s.fingerprint === code.fingerprint) : undefined;
    if (renamed) return moved({ filePath: code.filePath, symbol: renamed }, `the same text is now ${renamed.symbol}`);
    return (await lookElsewhere(code, index)) ?? { status: 'orphaned', detail: `${code.symbol} is no longer in ${code.filePath}` };
  }

  if (code.startLine === null) return { status: 'fresh', detail: `${code.filePath} is there` };
  const end = code.endLine ?? code.startLine;
  if (!code.fingerprint) {
    return end <= file.lines.length
      ? { status: 'fresh', detail: `${span(code)} are there (no fingerprint to compare)` }
      : { status: 'drifted', detail: `${span(code)} run past the end of the file (${file.lines.length} lines)` };
  }
  if (sameLinesText) return { status: 'fresh', detail: `${span(code)} hold the same text` };
  const window = findWindow(file, code);
  if (window)
    return {
      status: 'moved',
      now: { filePath: code.filePath, symbol: code.symbol, ...window },
      detail: `the same text moved from ${span(code)} to ${span(window)}`,
    };
  return { status: 'drifted', detail: `${span(code)} hold other text now` };
}
