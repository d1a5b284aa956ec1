/**
 * Kotlin, when `@tree-sitter-grammars/tree-sitter-kotlin` is installed (about 46 MB, so not a
 * dependency): classes, interfaces and objects, functions and methods `Class.fun`, top-level
 * `const val`s; imports by package.
 */
import { nodesOfType } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec } from './types.js';

const definitions = `
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(source_file (property_declaration (modifiers (property_modifier) @modifier) (variable_declaration (identifier) @name)) @definition.constant (#eq? @modifier "const"))
`;

const BODIES = new Set(['class_body', 'enum_class_body', 'function_body']);

/** `import a.b.C` → a file ending `a/b/C.kt`; `import a.b.*` → the files of package a.b. */
function imports(root: SyntaxNode): ImportRef[] {
  return nodesOfType(root, new Set(['import'])).map((node): ImportRef => {
    const text = node.text.replace(/^import\s+|\s+as\s+\w+$/g, '').replace(/\s+/g, '');
    if (text.endsWith('.*')) return { namespace: text.slice(0, -2) };
    const parts = text.split('.');
    return { suffixes: [`${parts.join('/')}.kt`, `${parts.slice(0, -1).join('/')}.kt`] };
  });
}

export const kotlin: LanguageSpec = {
  name: 'kotlin',
  extensions: ['.kt', '.kts'],
  grammar: { package: '@tree-sitter-grammars/tree-sitter-kotlin', file: 'tree-sitter-kotlin.wasm' },
  optional: true,
  separator: '.',
  definitions,
  body: (node) => node.namedChildren.find((c) => c !== null && BODIES.has(c.type)) ?? null,
  imports,
};
