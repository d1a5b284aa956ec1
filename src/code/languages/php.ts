/** PHP: namespaces, classes, interfaces, traits, enums, functions, methods as `Class::method`; `use` through composer.json's PSR-4 map. */
import { joinPath, nodesOfType, vscodeGrammar } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec, RepoFacts } from './types.js';

const definitions = `
(namespace_definition name: (namespace_name) @name) @definition.namespace
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.function
`;

/** `use App\Models\User;` with PSR-4 `App\` → `src/`: `src/Models/User.php`. */
function imports(root: SyntaxNode, _path: string, facts: RepoFacts): ImportRef[] {
  const refs: ImportRef[] = [];
  for (const clause of nodesOfType(root, new Set(['namespace_use_clause']))) {
    const name = (clause.namedChildren.find((n) => n?.type === 'qualified_name' || n?.type === 'name')?.text ?? '').replace(/^\\/, '');
    const group =
      clause.parent?.parent?.type === 'namespace_use_declaration' ? clause.parent.parent.childForFieldName('prefix')?.text : undefined;
    const full = group ? `${group.replace(/^\\|\\$/g, '')}\\${name}` : name;
    for (const { prefix, dirs } of facts.psr4) {
      if (!full.startsWith(prefix)) continue;
      const rest = full.slice(prefix.length).split('\\').join('/');
      const candidates = dirs.flatMap((d) => joinPath(d, `${rest}.php`) ?? []);
      if (candidates.length > 0) refs.push({ candidates });
    }
  }
  return refs;
}

export const php: LanguageSpec = {
  name: 'php',
  extensions: ['.php'],
  grammar: vscodeGrammar('php'),
  separator: '::',
  definitions,
  join: (container, name, node) => (node.type === 'method_declaration' ? `${container}::${name}` : `${container}\\${name}`),
  imports,
};
