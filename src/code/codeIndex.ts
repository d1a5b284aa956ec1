/**
 * The files of a repository as code references see them: text, lines and (in the languages
 * src/code/languages/ reads) symbols, read once per file version (mtime and size) and kept for the next check.
 * A repository-wide index of symbols and fingerprints is built only when a reference has to be
 * looked for outside its own file.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { LRUCache } from 'lru-cache';
import { fingerprintOf, type CodeSymbol } from '../import/codeSymbols.js';
import { walkFiles } from '../import/walkFiles.js';
import { extractCode, hasExtractor, NestingError } from './languages/index.js';
import { runGit } from './git.js';

export interface IndexedFile {
  text: string;
  lines: string[];
  /** Null for files import-code does not parse. */
  symbols: CodeSymbol[] | null;
}

export interface SymbolHit {
  filePath: string;
  symbol: CodeSymbol;
}

/** Files larger than this are not read for a check (generated code). */
const MAX_FILE_BYTES = 4 * 2 ** 20;

/** Parsed files by absolute path, shared by every index in the process: a file is parsed once per version. */
const parsed = new LRUCache<string, { version: string; file: IndexedFile }>({ max: 20_000 });

/** Every symbol of a repository's code files, by fingerprint and by name. */
interface SymbolsEverywhere {
  byFingerprint: Map<string, SymbolHit[]>;
  bySymbol: Map<string, SymbolHit[]>;
}

/**
 * How old a repository-wide symbol index a bundle's freshness check may use. Building one walks
 * the whole repository (a realpath and a stat per file), and a bundle with an orphaned reference
 * needs one on every call: shared, it is built once and then rebuilt in the background while
 * calls use the previous one, so a symbol moved to another file is seen within about this long.
 */
const SHARED_EVERYWHERE_MAX_AGE_MS = 10_000;

const sharedEverywhere = new LRUCache<string, SymbolsEverywhere, { root: string; skip: string[] }>({
  max: 8,
  ttl: SHARED_EVERYWHERE_MAX_AGE_MS,
  allowStale: true,
  noDeleteOnFetchRejection: true,
  fetchMethod: (_key, _stale, { context }) => new CodeIndex(context.root, context.skip).everywhere(),
});

/** The text of lines `start`–`end` (1-based, inclusive) as a fingerprint. */
export function linesFingerprint(lines: readonly string[], start: number, end: number): string {
  return fingerprintOf(lines.slice(start - 1, end).join('\n'));
}

export class CodeIndex {
  /** One look per file and index: a check of 8,000 locations in 900 files stats 900 files. */
  private readonly files = new Map<string, Promise<IndexedFile | null>>();
  private everywhereIndex: Promise<SymbolsEverywhere> | undefined;

  /**
   * `root`: the folder code locations' paths are relative to. `shareEverywhere`: the
   * repository-wide index comes from one the process shares and refreshes in the background
   * (SHARED_EVERYWHERE_MAX_AGE_MS), for checks on the query path; a `check` builds its own.
   */
  constructor(
    readonly root: string,
    private readonly skip: string[] = [],
    private readonly options: { shareEverywhere?: boolean } = {},
  ) {}

  /** The absolute path of a location's file, or null when the path leaves the root. */
  pathOf(filePath: string): string | null {
    const abs = resolve(this.root, filePath);
    return abs.startsWith(this.root + sep) ? abs : null;
  }

  private realRoot: Promise<string> | undefined;

  /**
   * Where `filePath` leads when a symlink on its way takes it outside the root (resolved), else
   * null: such a file is a link, and its target is never read.
   */
  async leavesRoot(filePath: string): Promise<string | null> {
    const abs = this.pathOf(filePath);
    if (!abs) return null;
    const real = await realpath(abs).catch(() => null);
    if (real === null) return null;
    this.realRoot ??= realpath(this.root).catch(() => this.root);
    const root = await this.realRoot;
    return real === root || real.startsWith(root + sep) ? null : real;
  }

  /** The file at `filePath` (relative to the root), or null when it is not there; looked at once per index. */
  file(filePath: string): Promise<IndexedFile | null> {
    let file = this.files.get(filePath);
    if (!file) this.files.set(filePath, (file = this.read(filePath)));
    return file;
  }

  private async read(filePath: string): Promise<IndexedFile | null> {
    const abs = this.pathOf(filePath);
    if (!abs || (await this.leavesRoot(filePath)) !== null) return null;
    const info = await stat(abs).catch(() => null);
    if (!info?.isFile() || info.size > MAX_FILE_BYTES) return null;
    const version = `${info.mtimeMs}:${info.size}`;
    const cached = parsed.get(abs);
    if (cached?.version === version) return cached.file;
    const text = await readFile(abs, 'utf8');
    const file = { text, lines: text.split('\n'), symbols: hasExtractor(abs) ? await symbolsOf(abs, text) : null };
    parsed.set(abs, { version, file });
    return file;
  }

  /** The file as it was at a commit (for what changed since a fingerprint was taken), or null. */
  async atRevision(revision: string, filePath: string): Promise<string | null> {
    if (!/^[0-9a-f]{7,64}$/.test(revision) || !this.pathOf(filePath)) return null;
    return runGit(this.root, ['show', `${revision}:./${filePath}`]).catch(() => null);
  }

  /** Every symbol of the root's code files by fingerprint and by name. */
  everywhere(): Promise<SymbolsEverywhere> {
    if (this.options.shareEverywhere)
      return (this.everywhereIndex ??= sharedEverywhere
        .fetch(JSON.stringify([this.root, this.skip]), { context: { root: this.root, skip: this.skip } })
        .then((index) => index!));
    this.everywhereIndex ??= (async () => {
      const byFingerprint = new Map<string, SymbolHit[]>();
      const bySymbol = new Map<string, SymbolHit[]>();
      const push = (map: Map<string, SymbolHit[]>, key: string, hit: SymbolHit) => {
        const list = map.get(key);
        if (list) list.push(hit);
        else map.set(key, [hit]);
      };
      for (const abs of await walkFiles([this.root], hasExtractor, this.skip)) {
        const filePath = relative(this.root, abs).split(sep).join('/');
        for (const symbol of (await this.file(filePath))?.symbols ?? []) {
          if (symbol.symbol === null) continue;
          push(byFingerprint, symbol.fingerprint, { filePath, symbol });
          push(bySymbol, symbol.symbol, { filePath, symbol });
        }
      }
      return { byFingerprint, bySymbol };
    })();
    return this.everywhereIndex;
  }
}

/** A file's symbols, or null when it has none to give (its grammar missing, nested too deep to read). */
export async function symbolsOf(path: string, text: string): Promise<CodeSymbol[] | null> {
  try {
    return (await extractCode(path, text))?.symbols ?? null;
  } catch (error) {
    if (error instanceof NestingError) return null;
    throw error;
  }
}
