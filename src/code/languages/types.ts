/**
 * What a language's extractor is: a grammar, the extensions it reads, and tree-sitter queries that
 * find its definitions and imports. extract.ts runs them; each language is one small file.
 */
import type { CodeSymbol } from '../../import/codeSymbols.js';
import type * as TreeSitter from '@vscode/tree-sitter-wasm';

/** A node of a parsed tree (the runtime's own type). */
export type SyntaxNode = TreeSitter.Node;

/** A grammar's .wasm inside an npm package. */
export interface Grammar {
  package: string;
  file: string;
}

/** A kind a definition query may capture (`@definition.<kind>`). */
export type DefinitionKind = Exclude<CodeSymbol['kind'], 'file' | 'variable'>;

/**
 * An import as the file writes it, before it is matched with the repository's files:
 * - `candidates`: repository-relative paths, the first that exists wins;
 * - `suffixes`: the first path ending with one of these (a package under `src/`, a Java package folder);
 * - `namespace`: the files that declare this namespace or package (C#, a Java wildcard);
 * - `folder`: every file of the language in this folder (a Go package).
 */
export type ImportRef = { candidates: string[] } | { suffixes: string[] } | { namespace: string } | { folder: string };

/** What the repository tells an import resolver (the Go module path, PHP's PSR-4 map). */
export interface RepoFacts {
  /** Go modules: the module path of each go.mod, by the folder it is in ('' for the top). */
  goModules: { dir: string; module: string }[];
  /** PSR-4 prefixes of composer.json files: namespace prefix → folders (repository-relative). */
  psr4: { prefix: string; dirs: string[] }[];
}

export interface LanguageSpec {
  /** The name stored as a code location's `language`. */
  name: string;
  extensions: string[];
  grammar: Grammar;
  /** Whether the grammar ships with memcore (else its package is optional). */
  optional?: boolean;
  /** Joins a container's name and a member's (`.`, `::`). */
  separator: string;
  /**
   * A tree-sitter query: each pattern captures a definition as `@definition.<kind>`, or as `@scope`
   * (a block that qualifies the names inside but is no symbol, like Rust's `impl`), and its name as
   * `@name`; `@receiver` (Go) is the type a method belongs to. A function inside a class-like
   * definition becomes a method.
   */
  definitions: string;
  /** The text the parser reads, of the same length (positions hold): C's export macros blanked. */
  prepare?: (text: string) => string;
  /** The name as written (`Foo<T>` → `Foo`, `*T` → `T`); default: the text. */
  cleanName?: (text: string) => string;
  /** How a member joins its container; default `container + separator + name`. */
  join?: (container: string, name: string, node: SyntaxNode) => string;
  /** The node whose text starts the body (the signature ends there); default the `body` field. */
  body?: (node: SyntaxNode) => SyntaxNode | null;
  /** The docstring inside a definition (Python); default none: the comments right above it are the doc. */
  docstring?: (node: SyntaxNode) => string | null;
  /** The file's imports, unresolved. */
  imports?: (root: SyntaxNode, path: string, facts: RepoFacts) => ImportRef[];
}
