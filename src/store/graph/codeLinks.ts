import type { CodeLocation, GoldenPath } from '../../model/types.js';
import type { CodeReferenceQuery, EntryCodeReference } from './graphStore.js';
import type { SnapshotContent } from '../snapshot/snapshotFile.js';

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
export interface CodeLinksData {
  references: { entryId: string; codeId: string; relevance: number }[];
  implementations: { entryId: string; pathId: string }[];
  codeLocations: CodeLocation[];
  goldenPaths: GoldenPath[];
}

export class CodeLinks {
  private readonly refsOf = new Map<string, { codeId: string; relevance: number }[]>();
  private readonly pathsOf = new Map<string, string[]>();
  private readonly code: Map<string, CodeLocation>;
  private readonly paths: Map<string, GoldenPath>;
  /** The entries referencing each code location: what `findByCodeReference` answers from. */
  private readonly referencedBy = new Map<string, { entryId: string; relevance: number }[]>();

  constructor(data: CodeLinksData) {
    for (const r of data.references) {
      listIn(this.refsOf, r.entryId).push({ codeId: r.codeId, relevance: r.relevance });
      listIn(this.referencedBy, r.codeId).push({ entryId: r.entryId, relevance: r.relevance });
    }
    for (const i of data.implementations) listIn(this.pathsOf, i.entryId).push(i.pathId);
    this.code = new Map(data.codeLocations.map((c) => [c.id, c]));
    this.paths = new Map(data.goldenPaths.map((p) => [p.id, p]));
  }

  /** What it holds, as the data it is built from, for a snapshot file (the values are small: thousands of locations). */
  snapshot(): SnapshotContent {
    const data: CodeLinksData = {
      references: [...this.refsOf].flatMap(([entryId, refs]) => refs.map(({ codeId, relevance }) => ({ entryId, codeId, relevance }))),
      implementations: [...this.pathsOf].flatMap(([entryId, paths]) => paths.map((pathId) => ({ entryId, pathId }))),
      codeLocations: [...this.code.values()],
      goldenPaths: [...this.paths.values()],
    };
    return { arrays: {}, values: { data } };
  }

  static fromSnapshot({ values }: SnapshotContent): CodeLinks {
    return new CodeLinks(values.data as CodeLinksData);
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

  /**
   * References to the code locations that match every field given (`filePath` as a substring,
   * `symbol` and `codebaseId` exactly, as the Cypher query did), most relevant first, then by
   * file, first line and entry.
   */
  findByCodeReference(q: CodeReferenceQuery): EntryCodeReference[] {
    const found: EntryCodeReference[] = [];
    for (const code of this.code.values()) {
      if (q.filePath !== undefined && !code.filePath.includes(q.filePath)) continue;
      if (q.symbol !== undefined && code.symbol !== q.symbol) continue;
      if (q.codebaseId !== undefined && code.codebaseId !== q.codebaseId) continue;
      for (const { entryId, relevance } of this.referencedBy.get(code.id) ?? []) found.push({ entryId, relevance, code });
    }
    const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    return found.sort(
      (a, b) =>
        b.relevance - a.relevance ||
        byText(a.code.filePath, b.code.filePath) ||
        (a.code.startLine ?? Infinity) - (b.code.startLine ?? Infinity) ||
        byText(a.entryId, b.entryId),
    );
  }

  /** Forgets the links of deleted entries. */
  removeEntries(ids: Iterable<string>): void {
    for (const id of ids) {
      for (const { codeId } of this.refsOf.get(id) ?? []) {
        const list = this.referencedBy.get(codeId);
        if (list)
          this.referencedBy.set(
            codeId,
            list.filter((r) => r.entryId !== id),
          );
      }
      this.refsOf.delete(id);
      this.pathsOf.delete(id);
    }
  }
}
