/**
 * Scala, when `tree-sitter-scala` is installed (about 52 MB, so not a dependency): classes,
 * objects, traits, enums, functions and methods `Class.method`; imports by path.
 */
import { nodesOfType } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec } from './types.js';

const definitions = `
(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.class
(trait_definition name: (identifier) @name) @definition.trait
(enum_definition name: (identifier) @name) @definition.enum
(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
`;

/** `import a.b.C` → a file ending `a/b/C.scala` (or `a/b.scala`, a package object). */
function imports(root: SyntaxNode): ImportRef[] {
  return nodesOfType(root, new Set(['import_declaration'])).map((node): ImportRef => {
    const parts = node
      .childrenForFieldName('path')
      .filter((n) => n !== null)
      .map((n) => n.text);
    return { suffixes: [`${parts.join('/')}.scala`, `${parts.slice(0, -1).join('/')}.scala`] };
  });
}

export const scala: LanguageSpec = {
  name: 'scala',
  extensions: ['.scala', '.sc'],
  grammar: { package: 'tree-sitter-scala', file: 'tree-sitter-scala.wasm' },
  optional: true,
  separator: '.',
  definitions,
  imports,
};
