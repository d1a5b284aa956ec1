/** Java: classes, records, interfaces, enums, annotation types, methods and constructors as `Class.method`; imports by package. */
import { nodesOfType, vscodeGrammar } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec } from './types.js';

const definitions = `
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.function
`;

/** `import a.b.C;` → a file ending `a/b/C.java`; `import a.b.*;` → the files of package a.b. */
function imports(root: SyntaxNode): ImportRef[] {
  const refs: ImportRef[] = [];
  for (const node of nodesOfType(root, new Set(['import_declaration']))) {
    const text = node.text.replace(/^import\s+(static\s+)?|;$/g, '').replace(/\s+/g, '');
    if (text.endsWith('.*')) refs.push({ namespace: text.slice(0, -2) });
    else {
      const parts = text.split('.');
      // A static import names a member: its class is one segment up.
      refs.push({ suffixes: [`${parts.join('/')}.java`, `${parts.slice(0, -1).join('/')}.java`] });
    }
  }
  return refs;
}

export const java: LanguageSpec = {
  name: 'java',
  extensions: ['.java'],
  grammar: vscodeGrammar('java'),
  separator: '.',
  definitions,
  imports,
};
