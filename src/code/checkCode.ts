/**
 * `memcore check`: every code location of the store classified against a repository (fresh,
 * moved, drifted, orphaned; see codeFreshness.ts), with the entries and golden paths that point at
 * each one that is not fresh, and moved ones re-anchored on request.
 */
import type { Embedder } from '../embed/embedder.js';
import { indexDocument } from '../ingest/indexer.js';
import { validateMemoryDocument, type CodeLocationRecord } from '../model/memoryFile.js';
import type { CodeLocation } from '../model/types.js';
import type { Stores } from '../store/stores.js';
import { CodeIndex } from './codeIndex.js';
import { codeFreshness, type CodeFreshness, type Freshness } from './codeFreshness.js';

export interface CheckCodeOptions {
  /** The folder code locations' paths are relative to (a repository, or the folder import-code read). Required. */
  repo: string;
  /** Only the locations of this codebase. */
  codebase?: string;
  /** Re-anchor moved locations in the store: their file, symbol and lines become where the code is now. Default false. */
  fix?: boolean;
}

export interface CodeProblem extends CodeFreshness {
  code: CodeLocation;
  /** The entries that reference the location (secret ones are counted in `hiddenEntries`, not named). */
  entries: { id: string; title: string }[];
  hiddenEntries: number;
  goldenPaths: { id: string; name: string }[];
}

export interface CheckReport {
  repo: string;
  /** Locations checked. */
  locations: number;
  counts: Record<Freshness, number>;
  /** Every location that is not fresh, orphaned first, then drifted, then moved. */
  problems: CodeProblem[];
  /** Moved locations re-anchored (`fix`). */
  fixed: number;
}

const ORDER: Record<Freshness, number> = { orphaned: 0, drifted: 1, moved: 2, fresh: 3 };

export async function checkCode(stores: Stores, embedder: Embedder, options: CheckCodeOptions): Promise<CheckReport> {
  const index = new CodeIndex(options.repo, [stores.dir]);
  const locations = (await stores.graph.allCodeLocations()).filter(
    (c) => options.codebase === undefined || c.codebaseId === options.codebase,
  );
  const counts: Record<Freshness, number> = { fresh: 0, moved: 0, drifted: 0, orphaned: 0 };
  const found: (CodeFreshness & { code: CodeLocation })[] = [];
  for (const code of locations) {
    const freshness = await codeFreshness(code, index);
    counts[freshness.status]++;
    if (freshness.status !== 'fresh') found.push({ code, ...freshness });
  }
  found.sort((a, b) => ORDER[a.status] - ORDER[b.status] || a.code.id.localeCompare(b.code.id));

  const ids = found.map((p) => p.code.id);
  const references = await stores.graph.edgesInto(ids, ['REFERENCES_CODE']);
  const steps = await stores.graph.edgesInto(ids, ['PATH_STEP']);
  const entryIds = [...new Set(references.map((r) => r.from))];
  const entries = new Map((entryIds.length > 0 ? await stores.table.read({ ids: entryIds }) : []).map((s) => [s.entry.id, s.entry]));
  const paths = new Map((steps.length > 0 ? await stores.graph.allGoldenPaths() : []).map((p) => [p.id, p]));
  const problems = found.map((p): CodeProblem => {
    const referencing = references
      .filter((r) => r.to === p.code.id)
      .map((r) => entries.get(r.from))
      .filter((e) => e !== undefined);
    const shown = referencing.filter((e) => e.sensitivity !== 'secret');
    return {
      ...p,
      entries: shown.map((e) => ({ id: e.id, title: e.title })),
      hiddenEntries: referencing.length - shown.length,
      goldenPaths: [...new Set(steps.filter((s) => s.to === p.code.id).map((s) => s.from))].flatMap((id) =>
        paths.has(id) ? [{ id, name: paths.get(id)!.name }] : [],
      ),
    };
  });

  let fixed = 0;
  if (options.fix) {
    const moved = problems.filter((p) => p.status === 'moved' && p.now);
    if (moved.length > 0) {
      const records = moved.map(({ code, now }): CodeLocationRecord => ({
        id: code.id,
        codebase_id: code.codebaseId,
        file_path: now!.filePath,
        ...(now!.symbol ? { symbol: now!.symbol } : {}),
        start_line: now!.startLine,
        end_line: now!.endLine,
        ...(code.language ? { language: code.language } : {}),
        ...(code.kind ? { kind: code.kind } : {}),
        ...(code.fingerprint ? { fingerprint: code.fingerprint } : {}),
      }));
      const { document } = validateMemoryDocument('check --fix', { code_locations: records });
      await indexDocument(stores, embedder, 'check', document, []);
      fixed = moved.length;
    }
  }
  return { repo: options.repo, locations: locations.length, counts, problems, fixed };
}
