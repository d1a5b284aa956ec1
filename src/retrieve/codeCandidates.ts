/**
 * The code channel: code locations for a text, ranked by the text's words against the code search
 * index (paths, symbol names, signatures, doc comments, file text; identifiers split into words),
 * fused with the code the bundle's entries reference and with what the best files import. The
 * weighing is score.ts's; the index is store/codeSearchIndex.ts.
 */
import { DEFAULTS } from '../config/defaults.js';
import { throwIfAborted } from '../model/errors.js';
import { deriveCodeLocationId } from '../model/memoryFile.js';
import type { CodeLocation, CodeReference, CodeSearchHit } from '../model/types.js';
import type { CodeFileDocument } from '../store/codeSearchIndex.js';
import type { MemoryIndex } from '../store/memoryIndex.js';
import { codeQueryTerms, codeSearchScore, estimateTokens, fuseCodeEvidence, type CodeSearchWeights } from './score.js';

export interface CodeCandidateOptions {
  limit: number;
  /** Only code of these codebases. */
  codebases?: readonly string[];
  /** The bundle's code references (attachCode), most relevant first. */
  referenced?: readonly CodeReference[];
  weights?: CodeSearchWeights;
  signal?: AbortSignal;
}

interface FileEvidence {
  codebase: string;
  path: string;
  file?: CodeFileDocument;
  search: number;
  referenced: number;
  imported: number;
  why: string[];
  /** A location an entry references in the file (kept as the hit's location). */
  location?: CodeLocation;
}

/** The code search's file-level location of an indexed file, or of one of its symbols. */
function locationOf(file: CodeFileDocument, symbol: string | null): CodeLocation {
  const s = symbol === null ? undefined : file.symbols.find((x) => x.symbol === symbol);
  return {
    id: deriveCodeLocationId({ codebase_id: file.codebase, file_path: file.path, ...(s ? { symbol: s.symbol } : {}) }),
    codebaseId: file.codebase,
    filePath: file.path,
    symbol: s?.symbol ?? null,
    startLine: s?.startLine ?? 1,
    endLine: s?.endLine ?? file.lines,
    language: file.language,
    kind: s?.kind ?? 'file',
    fingerprint: null,
    revision: null,
  };
}

/** The best code locations for `text`, one per file, best first. */
export async function codeCandidates(index: MemoryIndex, text: string, opts: CodeCandidateOptions): Promise<CodeSearchHit[]> {
  const weights = opts.weights ?? DEFAULTS.codeSearch;
  const search = await index.codeSearch();
  throwIfAborted(opts.signal);
  const files = new Map<string, FileEvidence>();
  const evidenceOf = (codebase: string, path: string): FileEvidence => {
    const key = `${codebase}:${path}`;
    let e = files.get(key);
    if (!e) files.set(key, (e = { codebase, path, file: search.file(codebase, path), search: 0, referenced: 0, imported: 0, why: [] }));
    return e;
  };

  const found =
    search.size > 0
      ? search.search(codeQueryTerms(text), {
          limit: DEFAULTS.codeSearch.candidates,
          ...(opts.codebases ? { codebases: opts.codebases } : {}),
        })
      : new Map();
  const raw = [...found.values()].map(({ file, scores }) => ({ file, score: codeSearchScore(scores, file.path, weights) }));
  const best = Math.max(0, ...raw.map((r) => r.score));
  for (const { file, score } of raw) {
    if (score <= 0) continue;
    const e = evidenceOf(file.codebase, file.path);
    e.search = score / best;
    e.why.push('code-search');
  }

  const inScope = (codebase: string) => !opts.codebases || opts.codebases.includes(codebase);
  for (const ref of opts.referenced ?? []) {
    if (!inScope(ref.code.codebaseId)) continue;
    const e = evidenceOf(ref.code.codebaseId, ref.code.filePath);
    e.referenced = Math.max(e.referenced, ref.relevance);
    for (const id of ref.entryIds) if (!e.why.includes(`referenced by ${id}`)) e.why.push(`referenced by ${id}`);
    if (!e.location || (e.location.symbol === null && ref.code.symbol !== null)) e.location = ref.code;
  }

  // What the best files import is likely part of the change too (a helper, a type they share).
  const top = [...files.values()].filter((e) => e.file && e.search > 0).sort((a, b) => b.search - a.search);
  for (const importer of top.slice(0, DEFAULTS.codeSearch.importsFrom)) {
    for (const imported of search.importsOf(importer.file!)) {
      const e = evidenceOf(imported.codebase, imported.path);
      if (importer.search > e.imported) e.imported = importer.search;
      e.why.push(`imported by ${importer.path}`);
    }
  }

  const ranked = [...files.values()]
    .map((e) => ({ e, score: fuseCodeEvidence(e, weights) }))
    .sort((a, b) => b.score - a.score || a.e.path.localeCompare(b.e.path))
    .slice(0, opts.limit);
  throwIfAborted(opts.signal);
  return ranked.map(({ e, score }): CodeSearchHit => {
    const symbols = e.file
      ? [...search.symbolScores(text, e.file)]
          .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
          .slice(0, 3)
          .map(([s]) => s)
      : [];
    const code = e.location ?? (e.file ? locationOf(e.file, symbols[0] ?? null) : undefined);
    return { code: code!, score, why: e.why, symbols };
  });
}

/** What a code reference costs of a bundle's token budget: its line in the formatted context. */
export const codeRefTokens = (c: CodeLocation) =>
  estimateTokens(`- ${c.filePath}${c.symbol ? `#${c.symbol}` : ''} (lines ${c.startLine}-${c.endLine})`);

/**
 * A bundle's code references: the entries' references (attachCode) and the code channel's hits
 * fused, at most `max` and as many as the `tokens` left of the budget pay for, each with its why.
 * Without imported code (an empty code search index), the entries' references as they are.
 */
export async function codeForBundle(
  index: MemoryIndex,
  task: string,
  referenced: CodeReference[],
  opts: { max: number; tokens?: number; signal?: AbortSignal },
): Promise<CodeReference[]> {
  const why = (r: CodeReference) => r.entryIds.map((id) => `referenced by ${id}`);
  if ((await index.codeSearch()).size === 0) return referenced.map((r) => ({ ...r, why: why(r) }));
  const hits = await codeCandidates(index, task, { limit: opts.max, referenced, ...(opts.signal ? { signal: opts.signal } : {}) });
  const byFile = new Map<string, CodeReference[]>();
  for (const r of referenced) {
    const key = `${r.code.codebaseId}:${r.code.filePath}`;
    byFile.set(key, [...(byFile.get(key) ?? []), r]);
  }
  const out: CodeReference[] = [];
  let left = opts.tokens ?? Infinity;
  for (const h of hits) {
    const refs = byFile.get(`${h.code.codebaseId}:${h.code.filePath}`) ?? [];
    const ref = refs.find((r) => r.code.id === h.code.id) ?? refs[0];
    const code = ref?.code ?? h.code;
    left -= codeRefTokens(code);
    if (left < 0) break;
    out.push({
      code,
      relevance: Math.min(1, h.score),
      entryIds: [...new Set(refs.flatMap((r) => r.entryIds))],
      ...(ref?.freshness ? { freshness: ref.freshness } : {}),
      why: h.why,
    });
  }
  return out;
}
