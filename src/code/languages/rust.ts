/** Rust: functions, methods as `Type::method` (impl blocks), structs, enums, traits, modules, types, consts and statics; `mod` and `use crate::`. */
import { folderOf, joinPath, nodesOfType, vscodeGrammar, withoutGenerics } from './common.js';
import type { SyntaxNode } from './treeSitter.js';
import type { ImportRef, LanguageSpec } from './types.js';

const definitions = `
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(mod_item name: (identifier) @name) @definition.module
(type_item name: (type_identifier) @name) @definition.type
(impl_item type: (_) @name) @scope
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
`;

/** The folder a file's child modules live in: `src/a.rs` → `src/a`, `src/a/mod.rs` and `src/lib.rs` → their folder. */
const modulesFolder = (path: string) => (/(^|\/)(mod|lib|main)\.rs$/.test(path) ? folderOf(path) : path.replace(/\.rs$/, ''));

/** The `src` folder of the crate a file is in (the nearest folder named src above it). */
const crateRoot = (path: string) => {
  const at = path.lastIndexOf('src/');
  return at < 0 ? folderOf(path) : path.slice(0, at + 3);
};

/** `a::b::c` from a folder: the longest prefix that is a file (`a/b.rs`, `a/b/mod.rs`), longest first. */
const modulePath = (base: string, segments: string[]): string[] => {
  const out: string[] = [];
  for (let n = segments.length; n > 0; n--) {
    const p = segments.slice(0, n).join('/');
    for (const file of [`${p}.rs`, `${p}/mod.rs`]) {
      const joined = joinPath(base, file);
      if (joined) out.push(joined);
    }
  }
  return out;
};

function imports(root: SyntaxNode, path: string): ImportRef[] {
  const refs: ImportRef[] = [];
  for (const node of nodesOfType(root, new Set(['mod_item', 'use_declaration']))) {
    if (node.type === 'mod_item') {
      if (node.childForFieldName('body')) continue; // an inline module is this file
      const name = node.childForFieldName('name')?.text;
      if (name) refs.push({ candidates: modulePath(modulesFolder(path), [name]) });
      continue;
    }
    const argument = node.childForFieldName('argument')?.text ?? '';
    const m = /^(crate|self|super)((?:::\w+)*)/.exec(argument.replace(/\s+/g, ''));
    if (!m) continue;
    const segments = m[2]!.split('::').filter((s) => s !== '');
    const base = m[1] === 'crate' ? crateRoot(path) : m[1] === 'self' ? modulesFolder(path) : joinPath(modulesFolder(path), '..');
    if (base !== null && segments.length > 0) refs.push({ candidates: modulePath(base, segments) });
  }
  return refs;
}

export const rust: LanguageSpec = {
  name: 'rust',
  extensions: ['.rs'],
  grammar: vscodeGrammar('rust'),
  separator: '::',
  definitions,
  cleanName: withoutGenerics,
  imports,
};
