/**
 * import-code's hook into the code search index (store/codeSearchIndex.ts): each file it reads is
 * handed over with its text and symbols, and the index is written once the stores took the import.
 * A file the index lacks (a database imported before it existed) is read for it even when its
 * hash is unchanged.
 */
import type { CodeSymbol } from './codeSymbols.js';
import { importSpecifiers } from './sourceFiles.js';
import { codeSearchPaths, updateCodeSearch, type CodeFileDocument } from '../store/codeSearchIndex.js';

export class CodeSearchHook {
  private readonly documents: CodeFileDocument[] = [];

  private constructor(
    private readonly dir: string,
    private readonly codebase: string,
    private readonly indexed: Set<string>,
  ) {}

  static async open(dir: string, codebase: string): Promise<CodeSearchHook> {
    return new CodeSearchHook(dir, codebase, await codeSearchPaths(dir, codebase));
  }

  /** Whether an unchanged file must still be read for the index. */
  lacks(path: string): boolean {
    return !this.indexed.has(path);
  }

  add(path: string, language: string, text: string, symbols: readonly CodeSymbol[]): void {
    this.documents.push({
      codebase: this.codebase,
      path,
      language,
      lines: symbols.find((s) => s.symbol === null)?.endLine ?? 1,
      symbols: symbols.flatMap((s) =>
        s.symbol === null
          ? []
          : [
              {
                symbol: s.symbol,
                kind: s.kind,
                startLine: s.startLine,
                endLine: s.endLine,
                ...(s.signature ? { signature: s.signature } : {}),
                ...(s.doc ? { doc: s.doc } : {}),
              },
            ],
      ),
      imports: importSpecifiers(language, text),
      text,
    });
  }

  /** Writes what was added, and drops the `gone` paths. */
  commit(gone: readonly string[]): Promise<void> {
    return updateCodeSearch(this.dir, this.codebase, this.documents, gone);
  }
}
