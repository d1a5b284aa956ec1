/** Helpers the language files share: the default grammar package, paths, and names. */
import { posix } from 'node:path';
import type { Grammar } from './types.js';
import type { SyntaxNode } from './treeSitter.js';

/** The default grammars: one package, one runtime, kept by the VS Code team (see docs/code.md). */
export const vscodeGrammar = (name: string): Grammar => ({ package: '@vscode/tree-sitter-wasm', file: `wasm/tree-sitter-${name}.wasm` });

/** The folder of a repository-relative path ('' at the top). */
export const folderOf = (path: string) => posix.dirname(path).replace(/^\.$/, '');

/** A repository-relative path joined and normalised; null when it climbs out of the repository. */
export function joinPath(...parts: string[]): string | null {
  const joined = posix.normalize(posix.join(...parts.filter((p) => p !== '')));
  return joined.startsWith('../') || joined === '..' || posix.isAbsolute(joined) ? null : joined.replace(/^\.\//, '');
}

/** `Foo<T, U>` → `Foo`; `*T`, `&'a mut T` → `T`. */
export function withoutGenerics(text: string): string {
  let out = '';
  let depth = 0;
  for (const ch of text) {
    if (ch === '<') depth++;
    else if (ch === '>') depth = Math.max(0, depth - 1);
    else if (depth === 0) out += ch;
  }
  return out
    .replace(/^[\s*&]+|'\w+\s+|\bmut\s+|\bdyn\s+/g, '')
    .replace(/\s+/g, '')
    .trim();
}

/** Every node of `root` of one of `types` (found inside the WebAssembly runtime, without recursion in JS), at most `limit`. */
export function nodesOfType(root: SyntaxNode, types: ReadonlySet<string>, limit = 10_000): SyntaxNode[] {
  return root
    .descendantsOfType([...types])
    .filter((n): n is SyntaxNode => n !== null)
    .slice(0, limit);
}

/** The text of a string literal node without its quotes. */
export const unquote = (text: string) => text.replace(/^[rbuf]*(['"`]{1,3})([\s\S]*)\1$/i, '$2');
