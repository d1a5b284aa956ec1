/**
 * Which code each entry references and which golden paths it implements, with the code locations
 * and paths themselves, in memory: every buildTaskContext asks for them, and a Kuzu lookup of a
 * dozen entries costs 30–50 ms at 100K entries (the id list is matched by scanning the node
 * table). Small next to the entries (code locations and paths number in the thousands), so a
 * write that touches code is answered by reloading, not by patching.
 */
import type { CodeLocation, GoldenPath } from '../../model/types.js';
import type { CodeEdgeType, CodeLinksData, CodeReferenceQuery, EntryCodeReference } from './graphStore.js';
import type { SnapshotContent } from '../snapshot/snapshotFile.js';
import { sortedIndexOf } from '../../kernel/sortedIndexOf.js';

export type { CodeLinksData };

function listIn<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}

/** The maps every lookup and write can use: built from the data, or from a snapshot when first needed. */
interface Linked {
  refsOf: Map<string, { codeId: string; relevance: number }[]>;
  pathsOf: Map<string, string[]>;
  code: Map<string, CodeLocation>;
  paths: Map<string, GoldenPath>;
  /** The entries referencing each code location: what `findByCodeReference` answers from. */
  referencedBy: Map<string, { entryId: string; relevance: number }[]>;
}

/**
 * The references as a snapshot holds them, columns of typed arrays and string lists: a bundle's
 * dozen entries are looked up by binary search and only their code locations are made objects
 * (building every map cost ~40 ms of a fresh process's first query at 100K entries).
 */
interface LoadedReferences {
  /** Entries with references, sorted; entry i's are `refStart[i]` up to `refStart[i + 1]`. */
  entries: string[];
  refStart: Uint32Array;
  /** Index of each reference's code location in the columns below. */
  refCode: Uint32Array;
  refRelevance: Float64Array;
  code: CodeColumns;
  decoded: (CodeLocation | undefined)[];
}

interface CodeColumns {
  ids: string[];
  codebaseIds: string[];
  filePaths: string[];
  symbols: (string | null)[];
  /** NaN for none. */
  startLines: Float64Array;
  endLines: Float64Array;
  languages: (string | null)[];
  kinds: (string | null)[];
  fingerprints: (string | null)[];
  revisions: (string | null)[];
}

export class CodeLinks {
  private linked: Linked | undefined;
  private loaded: LoadedReferences | undefined;
  /** Golden paths and which entries implement them: hundreds, held as maps either way. */
  private readonly pathsOf: Map<string, string[]>;
  private readonly paths: Map<string, GoldenPath>;

  constructor(data: CodeLinksData) {
    this.linked = linkedOf(data);
    ({ pathsOf: this.pathsOf, paths: this.paths } = this.linked);
  }

  private get maps(): Linked {
    if (!this.linked) {
      const loaded = this.loaded!;
      const references = loaded.entries.flatMap((entryId, i) =>
        Array.from({ length: loaded.refStart[i + 1]! - loaded.refStart[i]! }, (_, k) => {
          const at = loaded.refStart[i]! + k;
          return { entryId, codeId: loaded.code.ids[loaded.refCode[at]!]!, relevance: loaded.refRelevance[at]! };
        }),
      );
      const codeLocations = loaded.code.ids.map((_, i) => codeAt(loaded, i));
      this.linked = {
        ...linkedOf({ references, implementations: [], codeLocations, goldenPaths: [] }),
        pathsOf: this.pathsOf,
        paths: this.paths,
      };
      this.loaded = undefined;
    }
    return this.linked;
  }

  /** Every reference, code location, golden path and implementation, as columns and lists (code-links/2). */
  snapshot(): SnapshotContent {
    const implementations = [...this.pathsOf].flatMap(([entryId, paths]) => paths.map((pathId) => [entryId, pathId] as const));
    const values = {
      implEntries: implementations.map(([e]) => e),
      implPaths: implementations.map(([, p]) => p),
      goldenPaths: [...this.paths.values()],
    };
    const loaded = this.loaded ?? loadedOf(this.maps);
    const { startLines, endLines, ...strings } = loaded.code;
    return {
      arrays: { refStart: loaded.refStart, refCode: loaded.refCode, refRelevance: loaded.refRelevance, startLines, endLines },
      values: { ...values, entries: loaded.entries, ...strings },
    };
  }

  static fromSnapshot({ arrays, values }: SnapshotContent): CodeLinks {
    const links = new CodeLinks({
      references: [],
      implementations: [],
      codeLocations: [],
      goldenPaths: values.goldenPaths as GoldenPath[],
    });
    const [implEntries, implPaths] = [values.implEntries as string[], values.implPaths as string[]];
    implEntries.forEach((entryId, i) => listIn(links.pathsOf, entryId).push(implPaths[i]!));
    const list = (name: string) => values[name] as (string | null)[];
    const code: CodeColumns = {
      ids: list('ids') as string[],
      codebaseIds: list('codebaseIds') as string[],
      filePaths: list('filePaths') as string[],
      symbols: list('symbols'),
      startLines: arrays.startLines as Float64Array,
      endLines: arrays.endLines as Float64Array,
      languages: list('languages'),
      kinds: list('kinds'),
      fingerprints: list('fingerprints'),
      revisions: list('revisions'),
    };
    const entries = values.entries as string[];
    const refStart = arrays.refStart as Uint32Array;
    if (refStart.length !== entries.length + 1 || code.startLines.length !== code.ids.length)
      throw new Error('the code links snapshot does not add up');
    links.loaded = {
      entries,
      refStart,
      refCode: arrays.refCode as Uint32Array,
      refRelevance: arrays.refRelevance as Float64Array,
      code,
      decoded: new Array<CodeLocation | undefined>(code.ids.length),
    };
    links.linked = undefined;
    return links;
  }

  codeReferencesOf(entryIds: readonly string[]): EntryCodeReference[] {
    const loaded = this.loaded;
    return [...new Set(entryIds)].flatMap((entryId) => {
      if (loaded) {
        const i = sortedIndexOf(loaded.entries, entryId);
        if (i < 0) return [];
        return Array.from({ length: loaded.refStart[i + 1]! - loaded.refStart[i]! }, (_, k) => {
          const at = loaded.refStart[i]! + k;
          return { entryId, relevance: loaded.refRelevance[at]!, code: codeAt(loaded, loaded.refCode[at]!) };
        });
      }
      const { refsOf, code } = this.maps;
      return (refsOf.get(entryId) ?? []).flatMap(({ codeId, relevance }) => {
        const location = code.get(codeId);
        return location ? [{ entryId, relevance, code: location }] : [];
      });
    });
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
    const { code: locations, referencedBy } = this.maps;
    for (const code of locations.values()) {
      if (q.filePath !== undefined && !code.filePath.includes(q.filePath)) continue;
      if (q.symbol !== undefined && code.symbol !== q.symbol) continue;
      if (q.codebaseId !== undefined && code.codebaseId !== q.codebaseId) continue;
      for (const { entryId, relevance } of referencedBy.get(code.id) ?? []) found.push({ entryId, relevance, code });
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

  /** Whether the entry references the code location (REFERENCES_CODE) or implements the golden path (IMPLEMENTS). */
  has(e: { type: CodeEdgeType; from: string; to: string }): boolean {
    if (e.type === 'IMPLEMENTS') return this.pathsOf.get(e.from)?.includes(e.to) ?? false;
    const loaded = this.loaded;
    if (loaded) {
      const i = sortedIndexOf(loaded.entries, e.from);
      if (i < 0) return false;
      for (let at = loaded.refStart[i]!; at < loaded.refStart[i + 1]!; at++) if (loaded.code.ids[loaded.refCode[at]!] === e.to) return true;
      return false;
    }
    return this.maps.refsOf.get(e.from)?.some((r) => r.codeId === e.to) ?? false;
  }

  /**
   * Adds references and implementations a write made, in place (a reference already held takes the
   * new relevance), as the graph database now holds them: a write of relations alone need not
   * reload the links (four scans of the graph, seconds at 1M entries). The code locations and golden
   * paths they point to must be held already (a write that adds those reloads instead).
   */
  upsert(
    references: readonly { entryId: string; codeId: string; relevance: number }[],
    implementations: readonly { entryId: string; pathId: string }[],
  ): void {
    if (references.length > 0) {
      const { refsOf, referencedBy } = this.maps;
      for (const { entryId, codeId, relevance } of references) {
        const held = listIn(refsOf, entryId).find((r) => r.codeId === codeId);
        if (held) {
          held.relevance = relevance;
          const back = listIn(referencedBy, codeId).find((r) => r.entryId === entryId);
          if (back) back.relevance = relevance;
          continue;
        }
        listIn(refsOf, entryId).push({ codeId, relevance });
        listIn(referencedBy, codeId).push({ entryId, relevance });
      }
    }
    for (const { entryId, pathId } of implementations) {
      const paths = listIn(this.pathsOf, entryId);
      if (!paths.includes(pathId)) paths.push(pathId);
    }
  }

  /** Forgets the links of deleted entries. */
  removeEntries(ids: Iterable<string>): void {
    const { refsOf, referencedBy } = this.maps;
    for (const id of ids) {
      for (const { codeId } of refsOf.get(id) ?? []) {
        const list = referencedBy.get(codeId);
        if (list)
          referencedBy.set(
            codeId,
            list.filter((r) => r.entryId !== id),
          );
      }
      refsOf.delete(id);
      this.pathsOf.delete(id);
    }
  }
}

function linkedOf(data: CodeLinksData): Linked {
  const linked: Linked = {
    refsOf: new Map(),
    pathsOf: new Map(),
    code: new Map(data.codeLocations.map((c) => [c.id, c])),
    paths: new Map(data.goldenPaths.map((p) => [p.id, p])),
    referencedBy: new Map(),
  };
  for (const r of data.references) {
    listIn(linked.refsOf, r.entryId).push({ codeId: r.codeId, relevance: r.relevance });
    listIn(linked.referencedBy, r.codeId).push({ entryId: r.entryId, relevance: r.relevance });
  }
  for (const i of data.implementations) listIn(linked.pathsOf, i.entryId).push(i.pathId);
  return linked;
}

/** The references and code locations of the maps as columns, entries sorted (by UTF-16 code units, as `<` compares). */
function loadedOf({ refsOf, code }: Linked): LoadedReferences {
  const locations = [...code.values()];
  const indexOf = new Map(locations.map((c, i) => [c.id, i]));
  const entries = [...refsOf.keys()].filter((id) => refsOf.get(id)!.some((r) => indexOf.has(r.codeId))).sort();
  const refStart = new Uint32Array(entries.length + 1);
  const refCode: number[] = [];
  const refRelevance: number[] = [];
  entries.forEach((entryId, i) => {
    for (const { codeId, relevance } of refsOf.get(entryId)!) {
      const at = indexOf.get(codeId);
      if (at === undefined) continue;
      refCode.push(at);
      refRelevance.push(relevance);
    }
    refStart[i + 1] = refCode.length;
  });
  const line = (v: number | null) => v ?? NaN;
  return {
    entries,
    refStart,
    refCode: Uint32Array.from(refCode),
    refRelevance: Float64Array.from(refRelevance),
    code: {
      ids: locations.map((c) => c.id),
      codebaseIds: locations.map((c) => c.codebaseId),
      filePaths: locations.map((c) => c.filePath),
      symbols: locations.map((c) => c.symbol),
      startLines: Float64Array.from(locations, (c) => line(c.startLine)),
      endLines: Float64Array.from(locations, (c) => line(c.endLine)),
      languages: locations.map((c) => c.language),
      kinds: locations.map((c) => c.kind),
      fingerprints: locations.map((c) => c.fingerprint),
      revisions: locations.map((c) => c.revision),
    },
    decoded: [],
  };
}

/** Code location `i` of the columns, made an object once. */
function codeAt(loaded: LoadedReferences, i: number): CodeLocation {
  let location = loaded.decoded[i];
  if (!location) {
    const c = loaded.code;
    const line = (v: number) => (Number.isNaN(v) ? null : v);
    location = {
      id: c.ids[i]!,
      codebaseId: c.codebaseIds[i]!,
      filePath: c.filePaths[i]!,
      symbol: c.symbols[i]!,
      startLine: line(c.startLines[i]!),
      endLine: line(c.endLines[i]!),
      language: c.languages[i]!,
      kind: c.kinds[i]!,
      fingerprint: c.fingerprints[i]!,
      revision: c.revisions[i]!,
    };
    loaded.decoded[i] = location;
  }
  return location;
}
