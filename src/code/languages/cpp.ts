/**
 * C and C++ (one grammar: C++'s reads C): functions, methods (`Class::method`, inline or out of
 * line), classes, structs, unions, enums, namespaces and typedefs; quoted `#include`s.
 */
import { folderOf, joinPath, nodesOfType, unquote, vscodeGrammar } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec } from './types.js';

const declarator = (inner: string) => `[
    (function_declarator declarator: ${inner})
    (pointer_declarator declarator: (function_declarator declarator: ${inner}))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: ${inner})))
    (reference_declarator (function_declarator declarator: ${inner}))]`;

const definitions = `
(function_definition declarator: ${declarator('(_) @name')}) @definition.function
(struct_specifier name: (_) @name body: (_)) @definition.struct
(union_specifier name: (_) @name body: (_)) @definition.struct
(enum_specifier name: (_) @name body: (_)) @definition.enum
(class_specifier name: (_) @name body: (_)) @definition.class
(namespace_definition name: (_) @name) @definition.namespace
(type_definition declarator: (type_identifier) @name) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
`;

/** `#include "x.h"`: next to the file, else a path ending so (an include folder). */
function imports(root: SyntaxNode, path: string): ImportRef[] {
  return nodesOfType(root, new Set(['preproc_include'])).flatMap((node): ImportRef[] => {
    const target = node.childForFieldName('path');
    if (target?.type !== 'string_literal') return []; // <system> headers
    const name = unquote(target.text);
    const near = joinPath(folderOf(path), name);
    return [near ? { candidates: [near] } : { suffixes: [name] }, { suffixes: [name.replace(/^(\.\.\/)+/, '')] }];
  });
}

/** `Foo::bar`, `Foo<T>` → `Foo`; `CJSON_CDECL main` (a calling-convention macro the parser took for a scope) → `main`. */
const cleanName = (text: string) => {
  const name = text.trim().replace(/<.*>$/, '');
  return name.includes('::') ? name.replace(/\s+/g, '') : (name.split(/\s+/).at(-1) ?? name);
};

/** `class LEVELDB_EXPORT Options {`: an export macro between the keyword and the name, blanked so the class parses. */
const prepare = (text: string) =>
  text.replace(
    /\b(class|struct|union)(\s+)([A-Z][A-Z0-9_]*[A-Z0-9])(?=\s+[A-Za-z_]\w*\s*(?:final\s*)?[:{])/g,
    (_m, keyword: string, gap: string, macro: string) => keyword + gap + ' '.repeat(macro.length),
  );

const base = { separator: '::', definitions, cleanName, prepare, imports } as const;

export const cpp: LanguageSpec = {
  name: 'cpp',
  extensions: ['.cc', '.cpp', '.cxx', '.c++', '.hh', '.hpp', '.hxx', '.h++', '.ipp', '.inl'],
  grammar: vscodeGrammar('cpp'),
  ...base,
};

export const c: LanguageSpec = { name: 'c', extensions: ['.c', '.h'], grammar: vscodeGrammar('cpp'), ...base };
