/**
 * Runs a language's definition query over a parse tree and makes code symbols of what it finds:
 * names qualified by the definitions around them (`Class.method`, `Type::method`), start and end
 * lines, kind, signature, doc comment and fingerprint, as import-code stores them for TS/JS.
 */
import { fingerprintOf, type CodeSymbol } from '../../import/codeSymbols.js';
import { parse, query, type SyntaxNode } from './treeSitter.js';
import type { DefinitionKind, ImportRef, LanguageSpec, RepoFacts } from './types.js';

/** What one file gives: its symbols (the file first) and its imports. */
export interface Extraction {
  symbols: CodeSymbol[];
  imports: ImportRef[];
  /** Set when the parser met text it could not read: the symbols are what parsed around it. */
  syntaxErrors: boolean;
}

/** Ancestors looked through for a definition's container; a file nested deeper is refused, not walked. */
export const MAX_NESTING = 256;

export class NestingError extends Error {}

const CONTAINERS = new Set<string>(['class', 'struct', 'interface', 'trait', 'enum', 'module', 'namespace', 'function', 'method']);
const CLASS_LIKE = new Set<string>(['class', 'struct', 'interface', 'trait', 'enum']);
const ATTRIBUTE = /^(attribute_item|attribute_list|attribute|decorator|annotation|marker_annotation)$/;
/** A definition pattern's kind that a more specific one for the same node replaces (Go: `type X struct`). */
const GENERIC_KIND = 'type';
const SIGNATURE_CHARS = 300;
const DOC_CHARS = 1_000;

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/** A comment's words without its markers (`//`, `#`, `/*`, leading `*`). */
function commentText(text: string): string {
  return text
    .replace(/^\/\*+|\*+\/$/g, '')
    .split('\n')
    .map((l) => l.replace(/^\s*(\/\/+!?|#+|\*|--)\s?/, '').trimEnd())
    .join('\n')
    .trim();
}

/** Comments right above a node (no blank line between), as one text. */
function docAbove(node: SyntaxNode): string | null {
  const parts: string[] = [];
  // A definition that opens its parent (Go's `type X struct` in a type declaration) has the parent's doc.
  let target = node;
  while (!target.previousNamedSibling && target.parent?.parent && target.parent.startPosition.row === target.startPosition.row)
    target = target.parent;
  let line = target.startPosition.row;
  let sibling = target.previousNamedSibling;
  // Attributes, decorators and annotations sit between a doc comment and its definition.
  while (sibling && ATTRIBUTE.test(sibling.type) && sibling.endPosition.row >= line - 1) {
    line = sibling.startPosition.row;
    sibling = sibling.previousNamedSibling;
  }
  // Inner doc comments (`//!`, `/*!`) belong to the file or module around them.
  while (sibling && /comment/.test(sibling.type) && !/^(\/\/!|\/\*!)/.test(sibling.text) && sibling.endPosition.row >= line - 1) {
    parts.unshift(commentText(sibling.text));
    line = sibling.startPosition.row;
    sibling = sibling.previousNamedSibling;
  }
  const doc = parts.join('\n').trim();
  return doc ? doc.slice(0, DOC_CHARS) : null;
}

/** Text from a definition's start to its body: `def f(a, b) -> int:`, `func (s *S) Run(ctx context.Context) error`. */
function signatureOf(spec: LanguageSpec, node: SyntaxNode, whole: string): string {
  const body = spec.body ? spec.body(node) : node.childForFieldName('body');
  const upToBody = body !== null && body.startIndex > node.startIndex;
  const text = whole.slice(node.startIndex, upToBody ? body.startIndex : node.endIndex);
  return collapse(upToBody ? text : text.split('\n')[0]!)
    .replace(/[\s{:=]+$/, '')
    .slice(0, SIGNATURE_CHARS);
}

interface Definition {
  node: SyntaxNode;
  kind: DefinitionKind | 'scope';
  name: string;
  receiver: string | null;
}

/** The location of a whole file: lines 1 to its last line, the fingerprint of all its text. */
export function fileSymbol(text: string): CodeSymbol {
  const lines = (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n').length;
  return { symbol: null, kind: 'file', startLine: 1, endLine: Math.max(1, lines), fingerprint: fingerprintOf(text) };
}

/** The symbols and imports of one file in a language whose grammar is loaded. */
export function extractWith(spec: LanguageSpec, path: string, text: string, facts: RepoFacts): Extraction {
  const tree = parse(spec.grammar, spec.prepare ? spec.prepare(text) : text);
  const textOf = (node: SyntaxNode) => text.slice(node.startIndex, node.endIndex);
  try {
    const root = tree.rootNode;
    const clean = spec.cleanName ?? ((s: string) => s);
    const definitions = new Map<number, Definition>();
    for (const match of query(spec.grammar, spec.definitions).matches(root)) {
      let node: SyntaxNode | null = null;
      let kind: Definition['kind'] | null = null;
      let name: string | null = null;
      let receiver: string | null = null;
      for (const c of match.captures) {
        if (c.name.startsWith('definition.')) [node, kind] = [c.node, c.name.slice('definition.'.length) as DefinitionKind];
        else if (c.name === 'scope') [node, kind] = [c.node, 'scope'];
        else if (c.name === 'name') name = clean(c.node.text);
        else if (c.name === 'receiver') receiver = clean(c.node.text);
      }
      if (!node || !kind || !name) continue;
      const before = definitions.get(node.id);
      if (before && (before.kind !== GENERIC_KIND || kind === GENERIC_KIND)) continue;
      definitions.set(node.id, { node, kind, name, receiver });
    }
    const ordered = [...definitions.values()].sort((a, b) => a.node.startIndex - b.node.startIndex || b.node.endIndex - a.node.endIndex);

    const symbols: CodeSymbol[] = [fileSymbol(text)];
    const qualified = new Map<number, { name: string; kind: Definition['kind'] }>();
    const seen = new Map<string, number>();
    for (const d of ordered) {
      let container: { name: string; kind: Definition['kind'] } | undefined;
      let depth = 0;
      for (let up = d.node.parent; up && !container; up = up.parent) {
        if (++depth > MAX_NESTING) throw new NestingError(`definitions nested more than ${MAX_NESTING} deep`);
        container = qualified.get(up.id);
      }
      let kind = d.kind;
      if (kind === 'function' && (d.receiver || (container && (CLASS_LIKE.has(container.kind) || container.kind === 'scope'))))
        kind = 'method';
      const owner = d.receiver ?? container?.name;
      const name = owner ? (spec.join ? spec.join(owner, d.name, d.node) : `${owner}${spec.separator}${d.name}`) : d.name;
      if (CONTAINERS.has(kind) || kind === 'scope') qualified.set(d.node.id, { name, kind });
      if (kind === 'scope') continue;
      // Overloads and reopened definitions share a name; the later ones are numbered so each keeps an id.
      const n = (seen.get(name) ?? 0) + 1;
      seen.set(name, n);
      const doc = spec.docstring?.(d.node) ?? docAbove(d.node);
      symbols.push({
        symbol: n === 1 ? name : `${name}~${n}`,
        kind,
        startLine: d.node.startPosition.row + 1,
        endLine: d.node.endPosition.row + (d.node.endPosition.column === 0 && d.node.endPosition.row > d.node.startPosition.row ? 0 : 1),
        fingerprint: fingerprintOf(textOf(d.node)),
        signature: signatureOf(spec, d.node, text),
        ...(doc ? { doc } : {}),
      });
    }
    return {
      symbols,
      imports: spec.imports?.(root, path, facts) ?? [],
      syntaxErrors: root.hasError,
    };
  } finally {
    tree.delete();
  }
}
