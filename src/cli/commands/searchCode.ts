/**
 * `memcore search --mode code <text>`: the imported code for a text (MemoryEngine.findCode), one
 * location per file, best first, each with why. main.ts's `search` hands this mode here.
 */
import type { MemoryEngine } from '../../engine/memoryEngine.js';
import { SENSITIVITY_LEVELS, type CodeSearchHit } from '../../model/types.js';

/** The search options that mean something for code: the rest are refused (exit 2). */
export const CODE_SEARCH_FLAGS = ['limit', 'codebase', 'no-entries', 'include-secret', 'json', 'db', 'help', 'mode'];

export function codeHitLine(i: number, h: CodeSearchHit): string {
  const c = h.code;
  const where = `${c.filePath}${c.symbol ? `#${c.symbol}` : ''}:${c.startLine ?? 1}-${c.endLine ?? 1}`;
  const symbols = h.symbols.length > 0 && !c.symbol ? `  [${h.symbols.join(', ')}]` : '';
  return `${String(i + 1).padStart(2)}. ${h.score.toFixed(3)}  ${c.codebaseId}:${where}${symbols}  ← ${h.why.join('; ')}`;
}

export async function searchCode(
  memory: MemoryEngine,
  text: string,
  options: { limit?: number; codebases?: string[]; entries: boolean; includeSecret: boolean },
): Promise<{ hits: CodeSearchHit[]; text: () => string }> {
  const hits = await memory.findCode(text, {
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.codebases ? { codebases: options.codebases } : {}),
    entries: options.entries,
    ...(options.includeSecret ? { sensitivity: [...SENSITIVITY_LEVELS] } : {}),
  });
  return {
    hits,
    text: () =>
      hits.length === 0
        ? 'no matching code (import some with `memcore import-code <folder>`)'
        : hits.map((h, i) => codeHitLine(i, h)).join('\n'),
  };
}
