/**
 * The languages import-code, check and context --diff read, by file extension: TypeScript and
 * JavaScript through the TypeScript compiler (src/import/codeSymbols.ts), every other language
 * through its tree-sitter extractor (one file each in this folder). `extractCode` is the one way in.
 */
import { codeLanguage as tsLanguage, codeSymbols } from '../../import/codeSymbols.js';
import { bash } from './bash.js';
import { c, cpp } from './cpp.js';
import { csharp } from './csharp.js';
import { extractWith, fileSymbol, NestingError, type Extraction } from './extract.js';
import { go } from './go.js';
import { java } from './java.js';
import { kotlin } from './kotlin.js';
import { php } from './php.js';
import { python } from './python.js';
import { ruby } from './ruby.js';
import { rust } from './rust.js';
import { scala } from './scala.js';
import { grammarFile, isLoaded, loadGrammar } from './treeSitter.js';
import type { ImportRef, LanguageSpec, RepoFacts } from './types.js';

export type { Extraction } from './extract.js';
export type { ImportRef, LanguageSpec, RepoFacts } from './types.js';

/** The tree-sitter languages, in the order docs/code.md lists them. */
export const TREE_SITTER_LANGUAGES: readonly LanguageSpec[] = [python, go, rust, java, csharp, c, cpp, ruby, php, bash];

/** Languages whose grammar package a user installs (memcore finds it); until then their files are file-level only. */
export const OPTIONAL_LANGUAGES: readonly LanguageSpec[] = [kotlin, scala];

const byExtension = new Map(
  [...TREE_SITTER_LANGUAGES, ...OPTIONAL_LANGUAGES].flatMap((spec) => spec.extensions.map((e) => [e, spec] as const)),
);

const extensionOf = (name: string) => {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot).toLowerCase();
};

/**
 * Code in languages memcore has no extractor for (or whose optional grammar is not installed):
 * import-code keeps one file-level location per file and says so in its report.
 */
export const FILE_ONLY_LANGUAGES: Readonly<Record<string, string>> = {
  '.swift': 'swift',
  '.m': 'objective-c',
  '.mm': 'objective-c',
  '.dart': 'dart',
  '.lua': 'lua',
  '.ex': 'elixir',
  '.exs': 'elixir',
  '.erl': 'erlang',
  '.hs': 'haskell',
  '.ml': 'ocaml',
  '.clj': 'clojure',
  '.groovy': 'groovy',
  '.pl': 'perl',
  '.r': 'r',
  '.jl': 'julia',
  '.zig': 'zig',
  '.vue': 'vue',
  '.svelte': 'svelte',
  '.ps1': 'powershell',
  '.fs': 'fsharp',
  '.vb': 'visual-basic',
};

/** The language of a code file (`typescript`, `python`, `kotlin`, …), or null for a file that is not code import-code reads. */
export function languageOf(name: string): string | null {
  const ts = tsLanguage(name);
  if (ts) return ts.language;
  if (/\.(min\.[cm]?js|d\.[cm]?ts)$/.test(name)) return null;
  const extension = extensionOf(name);
  return byExtension.get(extension)?.name ?? FILE_ONLY_LANGUAGES[extension] ?? null;
}

/** Whether memcore reads symbols from the file's language (TS/JS, or a tree-sitter extractor). */
export const hasExtractor = (name: string) => tsLanguage(name) !== null || specOf(name) !== null;

/** The tree-sitter spec of a file, when one reads it. */
export const specOf = (name: string): LanguageSpec | null => (tsLanguage(name) ? null : (byExtension.get(extensionOf(name)) ?? null));

/** Whether a grammar for the file is installed (TypeScript and JavaScript always are). */
export const grammarInstalled = (name: string) =>
  tsLanguage(name) !== null || (specOf(name) !== null && grammarFile(specOf(name)!.grammar) !== null);

/** Facts about no repository: imports that need go.mod or composer.json resolve to nothing. */
export const NO_FACTS: RepoFacts = { goModules: [], psr4: [] };

/** Why a file gives no symbols (its language's grammar is missing), or null when it does. */
export async function prepare(name: string): Promise<string | null> {
  const spec = specOf(name);
  if (!spec || isLoaded(spec.grammar)) return null;
  return (await loadGrammar(spec.grammar)) ? null : `the ${spec.name} grammar (${spec.grammar.package}) is not installed`;
}

/** A file's symbols and imports; throws NestingError (or RangeError from the compiler) for a file nested too deep to read. */
export async function extractCode(path: string, text: string, facts: RepoFacts = NO_FACTS): Promise<Extraction | null> {
  if (tsLanguage(path)) {
    try {
      return { symbols: codeSymbols(path, text), imports: [], syntaxErrors: false };
    } catch (error) {
      if (error instanceof RangeError) throw new NestingError(`nested too deep for the TypeScript parser (${error.message})`);
      throw error;
    }
  }
  const spec = specOf(path);
  if (!spec || (await prepare(path)) !== null) return null;
  return extractWith(spec, path, text, facts);
}

export { fileSymbol, NestingError };

/** Repository-relative paths of the files an extraction's imports name (the file itself left out). */
export function resolveImports(
  path: string,
  refs: readonly ImportRef[],
  repo: { files: ReadonlySet<string>; bySuffix: (suffix: string) => string | null; declaring: (namespace: string) => string[] },
): string[] {
  const out = new Set<string>();
  const sameLanguage = (p: string) => languageOf(p) === languageOf(path);
  for (const ref of refs) {
    let found: string[] = [];
    if ('candidates' in ref) found = ref.candidates.filter((p) => repo.files.has(p)).slice(0, 1);
    else if ('suffixes' in ref) {
      for (const suffix of ref.suffixes) {
        const hit = repo.files.has(suffix) ? suffix : repo.bySuffix(suffix);
        if (hit) {
          found = [hit];
          break;
        }
      }
    } else if ('namespace' in ref) found = repo.declaring(ref.namespace);
    else {
      const prefix = ref.folder === '' ? '' : `${ref.folder}/`;
      found = [...repo.files].filter(
        (p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/') && sameLanguage(p) && !/_test\.go$/.test(p),
      );
    }
    for (const p of found) if (p !== path) out.add(p);
  }
  return [...out].sort();
}
