/** Go: functions, methods as `Type.Method` (the receiver's type), structs, interfaces, types, top-level constants; imports of packages inside the module. */
import { joinPath, nodesOfType, unquote, vscodeGrammar, withoutGenerics } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec, RepoFacts } from './types.js';

const definitions = `
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @receiver
    (pointer_type (type_identifier) @receiver)
    (generic_type type: (type_identifier) @receiver)
    (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name) @definition.function
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
`;

/** An import path inside one of the repository's modules: every .go file of that folder. */
function imports(root: SyntaxNode, _path: string, facts: RepoFacts): ImportRef[] {
  const refs: ImportRef[] = [];
  for (const spec of nodesOfType(root, new Set(['import_spec']))) {
    const path = spec.childForFieldName('path');
    if (!path) continue;
    const imported = unquote(path.text);
    for (const { dir, module } of facts.goModules) {
      if (imported !== module && !imported.startsWith(`${module}/`)) continue;
      const folder = joinPath(dir, imported.slice(module.length + 1));
      if (folder !== null) refs.push({ folder });
    }
  }
  return refs;
}

export const go: LanguageSpec = {
  name: 'go',
  extensions: ['.go'],
  grammar: vscodeGrammar('go'),
  separator: '.',
  definitions,
  cleanName: withoutGenerics,
  imports,
};
