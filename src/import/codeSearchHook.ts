/**
 * import-code's hook into the code search index (store/codeSearchIndex.ts): each file it reads is
 * handed over with its text and symbols, and the index is written once the stores took the import.
 * A file the index lacks (a database imported before it existed) is read for it even when its
 * hash is unchanged.
 */
import type { CodeSymbol } from './codeSymbols.js';
import { importSpecifiers } from './importSpecifiers.js';
import { codeSearchPaths, codeSearchState, updateCodeSearch, type CodeFileDocument } from '../store/codeSearchIndex.js';

export class CodeSearchHook {
  private readonly documents: CodeFileDocument[] = [];

  private constructor(
    private readonly dir: string,
    private readonly codebase: string,
  ) {}

  static open(dir: string, codebase: string): CodeSearchHook {
    return new CodeSearchHook(dir, codebase);
  }

  /** The paths the index holds, read on the first question (a run whose files all match their stamps asks none). */
  private indexed: Promise<Set<string>> | undefined;

  /** Whether an unchanged file must still be read for the index. */
  async lacks(path: string): Promise<boolean> {
    return !(await (this.indexed ??= codeSearchPaths(this.dir, this.codebase))).has(path);
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
  async commit(gone: readonly string[]): Promise<void> {
    await updateCodeSearch(this.dir, this.codebase, this.documents, gone);
  }

  /** What the index's files are now (`''`: none), which the file stamps keep: an index written since may lack paths. */
  state(): Promise<string> {
    return codeSearchState(this.dir);
  }
}
