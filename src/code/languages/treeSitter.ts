/**
 * The tree-sitter runtime and grammars, compiled to WebAssembly (no native build): the runtime and
 * the default grammars come from `@vscode/tree-sitter-wasm`; an optional grammar (Kotlin, Scala)
 * is found in its own package when a user installs it. Loading is asynchronous and done once per
 * grammar; parsing is then synchronous.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as TreeSitter from '@vscode/tree-sitter-wasm';
import type { Grammar, SyntaxNode } from './types.js';

export type { SyntaxNode };
export type SyntaxTree = TreeSitter.Tree;

const require = createRequire(import.meta.url);
type Runtime = typeof TreeSitter;

let runtime: Promise<Runtime> | undefined;
const languages = new Map<string, Promise<TreeSitter.Language | null>>();
const loaded = new Map<string, { parser: TreeSitter.Parser; language: TreeSitter.Language; queries: Map<string, TreeSitter.Query> }>();

function start(): Promise<Runtime> {
  runtime ??= (async () => {
    const ts = require('@vscode/tree-sitter-wasm') as Runtime;
    await ts.Parser.init();
    return ts;
  })();
  return runtime;
}

/** The .wasm file of a grammar, or null when its (optional) package is not installed. */
export function grammarFile(grammar: Grammar): string | null {
  try {
    const main = require.resolve(`${grammar.package}/package.json`);
    const file = join(dirname(main), grammar.file);
    return existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

const keyOf = (grammar: Grammar) => `${grammar.package}/${grammar.file}`;

/** Loads a grammar (once); false when its package is not installed or its .wasm does not load. */
export async function loadGrammar(grammar: Grammar): Promise<boolean> {
  const key = keyOf(grammar);
  let language = languages.get(key);
  if (!language) {
    language = (async () => {
      const file = grammarFile(grammar);
      if (!file) return null;
      const ts = await start();
      try {
        const lang = await ts.Language.load(file);
        const parser = new ts.Parser();
        parser.setLanguage(lang);
        loaded.set(key, { parser, language: lang, queries: new Map() });
        return lang;
      } catch {
        return null; // a grammar built for another runtime ABI
      }
    })();
    languages.set(key, language);
  }
  return (await language) !== null;
}

/** Whether loadGrammar has loaded the grammar. */
export const isLoaded = (grammar: Grammar) => loaded.has(keyOf(grammar));

/** A parse tree of `text` (the grammar loaded first); the caller deletes it. */
export function parse(grammar: Grammar, text: string): SyntaxTree {
  const entry = loaded.get(keyOf(grammar));
  if (!entry) throw new Error(`grammar ${keyOf(grammar)} is not loaded`);
  const tree = entry.parser.parse(text);
  if (!tree) throw new Error(`tree-sitter gave no tree for ${keyOf(grammar)}`);
  return tree;
}

/** A compiled query of the grammar, made once. */
export function query(grammar: Grammar, source: string): TreeSitter.Query {
  const entry = loaded.get(keyOf(grammar));
  if (!entry) throw new Error(`grammar ${keyOf(grammar)} is not loaded`);
  let q = entry.queries.get(source);
  if (!q) {
    const ts = require('@vscode/tree-sitter-wasm') as Runtime;
    q = new ts.Query(entry.language, source);
    entry.queries.set(source, q);
  }
  return q;
}
