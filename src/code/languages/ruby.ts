/** Ruby: classes and modules (`A::B`), methods as `Class#method` and `Class.method` (singleton), constants; `require_relative`. */
import { folderOf, joinPath, nodesOfType, unquote, vscodeGrammar } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec } from './types.js';

const definitions = `
(class name: (_) @name) @definition.class
(module name: (_) @name) @definition.module
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function
(assignment left: (constant) @name) @definition.constant
`;

function imports(root: SyntaxNode, path: string): ImportRef[] {
  return nodesOfType(root, new Set(['call'])).flatMap((call): ImportRef[] => {
    if (call.childForFieldName('method')?.text !== 'require_relative') return [];
    const arg = call.childForFieldName('arguments')?.namedChildren[0];
    if (arg?.type !== 'string') return [];
    const target = joinPath(folderOf(path), unquote(arg.text));
    return target ? [{ candidates: [target.endsWith('.rb') ? target : `${target}.rb`] }] : [];
  });
}

export const ruby: LanguageSpec = {
  name: 'ruby',
  extensions: ['.rb', '.rake'],
  grammar: vscodeGrammar('ruby'),
  separator: '::',
  definitions,
  // A Ruby definition's first line is its signature.
  body: () => null,
  join: (container, name, node) =>
    node.type === 'method' ? `${container}#${name}` : node.type === 'singleton_method' ? `${container}.${name}` : `${container}::${name}`,
  imports,
};
