import type { CodeLocation, GoldenPath } from '../../model/types.js';
import type { EntryCodeReference } from './graphStore.js';

function listIn<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}

/**
 * Which code each entry references and which golden paths it implements, with the code locations
 * and paths themselves, in memory: every buildTaskContext asks for them, and a Kuzu lookup of a
 * dozen entries costs 30–50 ms at 100K entries (the id list is matched by scanning the node
 * table). Small next to the entries (code locations and paths number in the thousands), so a
 * write that touches code is answered by reloading, not by patching.
 */
export class CodeLinks {
  private readonly refsOf = new Map<string, { codeId: string; relevance: number }[]>();
  private readonly pathsOf = new Map<string, string[]>();
  private readonly code: Map<string, CodeLocation>;
  private readonly paths: Map<string, GoldenPath>;

  constructor(data: {
    references: { entryId: string; codeId: string; relevance: number }[];
    implementations: { entryId: string; pathId: string }[];
    codeLocations: CodeLocation[];
    goldenPaths: GoldenPath[];
  }) {
    for (const r of data.references) listIn(this.refsOf, r.entryId).push({ codeId: r.codeId, relevance: r.relevance });
    for (const i of data.implementations) listIn(this.pathsOf, i.entryId).push(i.pathId);
    this.code = new Map(data.codeLocations.map((c) => [c.id, c]));
    this.paths = new Map(data.goldenPaths.map((p) => [p.id, p]));
  }

  codeReferencesOf(entryIds: readonly string[]): EntryCodeReference[] {
    return [...new Set(entryIds)].flatMap((entryId) =>
      (this.refsOf.get(entryId) ?? []).flatMap(({ codeId, relevance }) => {
        const code = this.code.get(codeId);
        return code ? [{ entryId, relevance, code }] : [];
      }),
    );
  }

  goldenPathsOf(entryIds: readonly string[]): (GoldenPath & { entryIds: string[] })[] {
    const found = new Map<string, GoldenPath & { entryIds: string[] }>();
    for (const entryId of new Set(entryIds)) {
      for (const pathId of this.pathsOf.get(entryId) ?? []) {
        const path = this.paths.get(pathId);
        if (!path) continue;
        const seen = found.get(pathId);
        if (seen) seen.entryIds.push(entryId);
        else found.set(pathId, { ...path, entryIds: [entryId] });
      }
    }
    return [...found.values()];
  }

  /** Forgets the links of deleted entries. */
  removeEntries(ids: Iterable<string>): void {
    for (const id of ids) {
      this.refsOf.delete(id);
      this.pathsOf.delete(id);
    }
  }
}
