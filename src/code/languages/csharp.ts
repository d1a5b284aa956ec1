/** C#: namespaces, classes, records, structs, interfaces, enums, methods and constructors as `Class.Method`; `using` by namespace. */
import { nodesOfType, vscodeGrammar } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec } from './types.js';

const definitions = `
(namespace_declaration name: (_) @name) @definition.namespace
(file_scoped_namespace_declaration name: (_) @name) @definition.namespace
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.function
(destructor_declaration name: (identifier) @name) @definition.function
(operator_declaration operator: _ @name) @definition.function
(delegate_declaration name: (identifier) @name) @definition.type
`;

function imports(root: SyntaxNode): ImportRef[] {
  return nodesOfType(root, new Set(['using_directive'])).flatMap((node) => {
    const name = node.namedChildren.at(-1)?.text;
    return name && !node.text.includes('=') ? [{ namespace: name }] : [];
  });
}

export const csharp: LanguageSpec = {
  name: 'csharp',
  extensions: ['.cs'],
  grammar: vscodeGrammar('c-sharp'),
  separator: '.',
  definitions,
  imports,
};
