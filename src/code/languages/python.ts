/** Python: classes, functions and methods, module-level UPPER_CASE constants; docstrings; relative and package imports. */
import { folderOf, joinPath, nodesOfType, vscodeGrammar } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec } from './types.js';

const definitions = `
(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(module (expression_statement (assignment left: (identifier) @name) @definition.constant) (#match? @name "^[A-Z][A-Z0-9_]*$"))
`;

function docstring(node: SyntaxNode): string | null {
  const first = node.childForFieldName('body')?.namedChildren[0];
  const string = first?.type === 'expression_statement' ? first.namedChildren[0] : null;
  if (string?.type !== 'string') return null;
  const text = string.text.replace(/^[rbuf]*("""|'''|"|')|("""|'''|"|')$/gi, '').trim();
  return text ? text.slice(0, 1_000) : null;
}

/** `a.b.c` as a module: `a/b/c.py` or `a/b/c/__init__.py`, under any folder (a `src/` layout). */
const moduleFiles = (dotted: string, base?: string): string[] => {
  const path = dotted.split('.').join('/');
  return [`${path}.py`, `${path}/__init__.py`].map((p) => (base === undefined ? p : (joinPath(base, p) ?? ''))).filter((p) => p !== '');
};

function imports(root: SyntaxNode, path: string): ImportRef[] {
  const refs: ImportRef[] = [];
  for (const node of nodesOfType(root, new Set(['import_statement', 'import_from_statement']))) {
    if (node.type === 'import_statement') {
      for (const name of node.childrenForFieldName('name')) {
        if (!name) continue;
        const dotted = (name.type === 'aliased_import' ? name.childForFieldName('name') : name)?.text;
        if (dotted) refs.push({ suffixes: moduleFiles(dotted) });
      }
      continue;
    }
    const module = node.childForFieldName('module_name');
    if (!module) continue;
    const names = node
      .childrenForFieldName('name')
      .map((n) => (n?.type === 'aliased_import' ? n.childForFieldName('name') : n)?.text ?? '');
    if (module.type === 'relative_import') {
      const dots = /^\.+/.exec(module.text)![0].length;
      const rest = module.text.slice(dots);
      let base: string | null = folderOf(path);
      for (let i = 1; i < dots && base !== null; i++) base = joinPath(base, '..');
      if (base === null) continue;
      const dir = rest ? (joinPath(base, rest.split('.').join('/')) ?? '') : base;
      // `from .mod import name`: name may be a module of the package, else a name in the module.
      const own = rest ? moduleFiles(rest, base) : [joinPath(base, '__init__.py') ?? ''];
      for (const name of names) if (name) refs.push({ candidates: [...moduleFiles(name, dir), ...own] });
      if (names.length === 0) refs.push({ candidates: own });
    } else {
      for (const name of names) if (name) refs.push({ suffixes: [...moduleFiles(`${module.text}.${name}`), ...moduleFiles(module.text)] });
      if (names.length === 0) refs.push({ suffixes: moduleFiles(module.text) });
    }
  }
  return refs;
}

export const python: LanguageSpec = {
  name: 'python',
  extensions: ['.py', '.pyi'],
  grammar: vscodeGrammar('python'),
  separator: '.',
  definitions,
  docstring,
  imports,
};
