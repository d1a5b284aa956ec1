/**
 * The symbols of a TypeScript or JavaScript file, through the TypeScript compiler's parser (no type
 * checking, no tsconfig: one file at a time, tolerant of errors, as an editor reads it).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type TS from 'typescript';

/**
 * The compiler, loaded on the first TypeScript or JavaScript file: loading it costs ~0.3 s of CPU,
 * which every process that imports memcore paid, most of them (a query, a re-import of other
 * languages' files) without reading a TypeScript file.
 */
let ts: typeof TS;
const loadCompiler = () => (ts ??= createRequire(import.meta.url)('typescript') as typeof TS);

export interface CodeSymbol {
  /** `name`, `Class.method`, `Namespace.name`; null for the file itself. */
  symbol: string | null;
  kind:
    | 'file'
    | 'function'
    | 'class'
    | 'method'
    | 'interface'
    | 'type'
    | 'enum'
    | 'variable'
    | 'namespace'
    // Kinds of the other languages (src/code/languages/).
    | 'struct'
    | 'trait'
    | 'module'
    | 'constant';
  startLine: number;
  endLine: number;
  /** sha256 (32 hex) of the text with whitespace collapsed: the same after a move, new after an edit. */
  fingerprint: string;
  /** The declaration's first line(s) up to its body, whitespace collapsed (at most 200 characters). */
  signature?: string;
  /** The doc comment above the declaration, without comment markers (at most 400 characters). */
  doc?: string;
}

/** Extensions import-code reads, and the language each is. */
export const CODE_EXTENSIONS: Record<string, { language: 'typescript' | 'javascript'; kind: 'TS' | 'TSX' | 'JS' | 'JSX' }> = {
  '.ts': { language: 'typescript', kind: 'TS' },
  '.mts': { language: 'typescript', kind: 'TS' },
  '.cts': { language: 'typescript', kind: 'TS' },
  '.tsx': { language: 'typescript', kind: 'TSX' },
  '.js': { language: 'javascript', kind: 'JS' },
  '.mjs': { language: 'javascript', kind: 'JS' },
  '.cjs': { language: 'javascript', kind: 'JS' },
  '.jsx': { language: 'javascript', kind: 'JSX' },
};

/** The entry of CODE_EXTENSIONS for a file name; declaration files (.d.ts) and minified bundles are not read. */
export function codeLanguage(name: string): (typeof CODE_EXTENSIONS)[string] | null {
  if (/\.d\.[cm]?ts$/.test(name) || /\.min\.[cm]?js$/.test(name)) return null;
  const dot = name.lastIndexOf('.');
  return dot < 0 ? null : (CODE_EXTENSIONS[name.slice(dot).toLowerCase()] ?? null);
}

/** Levels of nested code the walk goes down (a file nested deeper keeps what is above). */
const MAX_NESTING = 200;

export const fingerprintOf = (text: string) => createHash('sha256').update(text.replace(/\s+/g, ' ').trim()).digest('hex').slice(0, 32);

const hasExport = (node: TS.Node) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
const isDefault = (node: TS.Node) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);

function memberName(name: TS.PropertyName | undefined): string | null {
  if (!name) return null;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return null; // a computed name has no name to write down
}

/** A declaration's head: its text up to the body's `{` or `=>` (or its first line), whitespace collapsed. */
function signatureOf(declaration: string): string {
  const body = declaration.search(/\{|=>/);
  const head = body > 0 ? declaration.slice(0, body) : declaration.split('\n', 1)[0]!;
  return head.replace(/\s+/g, ' ').trim().slice(0, 200);
}

/** The text of the last `/** … *\/` or `//` comment block between a node's full start and its start, markers removed. */
function docOf(text: string, fullStart: number, start: number): string {
  const trivia = text.slice(fullStart, start);
  const block = trivia.lastIndexOf('/**');
  const raw = block >= 0 ? trivia.slice(block) : (/(?:^[ \t]*\/\/.*\n?)+$/m.exec(trivia.trimEnd() + '\n')?.[0] ?? '');
  return raw
    .replace(/^\s*\/\*\*?|\*\/\s*$/g, '')
    .replace(/^\s*(\*|\/\/)\s?/gm, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 400);
}

/** The symbols of one file (`path` picks the dialect), the file itself first. */
export function codeSymbols(path: string, text: string): CodeSymbol[] {
  const language = codeLanguage(path);
  loadCompiler();
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind[language?.kind ?? 'TS']);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const out: CodeSymbol[] = [
    {
      symbol: null,
      kind: 'file',
      startLine: 1,
      endLine: Math.max(1, lineOf(text.endsWith('\n') ? text.length - 1 : text.length)),
      fingerprint: fingerprintOf(text),
    },
  ];
  const seen = new Map<string, number>();
  const add = (symbol: string, kind: CodeSymbol['kind'], node: TS.Node) => {
    const start = node.getStart(source);
    // Overloads and merged declarations share a name; the later ones are numbered so each keeps an id.
    const n = (seen.get(symbol) ?? 0) + 1;
    seen.set(symbol, n);
    const signature = signatureOf(text.slice(start, node.getEnd()));
    const doc = docOf(text, node.getFullStart(), start);
    out.push({
      symbol: n === 1 ? symbol : `${symbol}~${n}`,
      kind,
      startLine: lineOf(start),
      endLine: lineOf(node.getEnd()),
      fingerprint: fingerprintOf(text.slice(start, node.getEnd())),
      ...(signature ? { signature } : {}),
      ...(doc ? { doc } : {}),
    });
  };
  const isFunctionValue = (e: TS.Expression | undefined) => e !== undefined && (ts.isArrowFunction(e) || ts.isFunctionExpression(e));

  // Declarations inside function bodies and callbacks (`describe(() => { class A {} })`) are found
  // too, under the name of the function around them; the walk stops MAX_NESTING levels down.
  const inner = (node: TS.Node | undefined, prefix: string, depth: number): void => {
    if (!node || depth > MAX_NESTING) return;
    if (ts.isBlock(node)) return visit(node.statements, prefix, depth + 1, true);
    ts.forEachChild(node, (child) => inner(child, prefix, depth + 1));
  };

  const signatures = (name: string, members: TS.NodeArray<TS.TypeElement>) => {
    for (const member of members) {
      const m = ts.isMethodSignature(member) ? memberName(member.name) : null;
      if (m) add(`${name}.${m}`, 'method', member);
    }
  };

  const visitClass = (name: string, node: TS.ClassLikeDeclaration, depth: number) => {
    add(name, 'class', node);
    for (const member of node.members) {
      if (ts.isConstructorDeclaration(member) && member.body) {
        add(`${name}.constructor`, 'method', member);
        inner(member.body, `${name}.constructor.`, depth);
      } else if ((ts.isMethodDeclaration(member) && member.body) || ts.isGetAccessor(member) || ts.isSetAccessor(member)) {
        const m = memberName(member.name);
        if (m) add(`${name}.${m}`, 'method', member);
        if (m) inner(member.body, `${name}.${m}.`, depth);
      } else if (ts.isPropertyDeclaration(member) && isFunctionValue(member.initializer)) {
        const m = memberName(member.name);
        if (m) add(`${name}.${m}`, 'method', member);
      }
    }
  };

  /** `nested`: statements inside a function, where only declarations count (not plain variables). */
  const visit = (statements: readonly TS.Statement[], prefix: string, depth = 0, nested = false) => {
    for (const node of statements) {
      if (ts.isFunctionDeclaration(node)) {
        if (!node.body) continue; // an overload signature
        const name = node.name?.text ?? (isDefault(node) ? 'default' : null);
        if (name) add(prefix + name, 'function', node);
        inner(node.body, name ? `${prefix}${name}.` : prefix, depth);
      } else if (ts.isClassDeclaration(node)) {
        const name = node.name?.text ?? (isDefault(node) ? 'default' : null);
        if (name) visitClass(prefix + name, node, depth);
      } else if (ts.isInterfaceDeclaration(node)) {
        add(prefix + node.name.text, 'interface', node);
        signatures(prefix + node.name.text, node.members);
      } else if (ts.isTypeAliasDeclaration(node)) {
        add(prefix + node.name.text, 'type', node);
        if (ts.isTypeLiteralNode(node.type)) signatures(prefix + node.name.text, node.type.members);
      } else if (ts.isEnumDeclaration(node)) add(prefix + node.name.text, 'enum', node);
      else if (ts.isModuleDeclaration(node) && ts.isIdentifier(node.name) && node.name.text !== 'global') {
        add(prefix + node.name.text, 'namespace', node);
        if (node.body && ts.isModuleBlock(node.body)) visit(node.body.statements, `${prefix}${node.name.text}.`, depth + 1);
      } else if (ts.isModuleDeclaration(node)) {
        // `declare module 'x'` and `declare global` augment another module: their declarations are this file's.
        if (node.body && ts.isModuleBlock(node.body)) visit(node.body.statements, prefix, depth + 1);
      } else if (ts.isVariableStatement(node)) {
        const exported = hasExport(node) && !nested;
        node.declarationList.declarations.forEach((d, i) => {
          if (!ts.isIdentifier(d.name)) return inner(d.initializer, prefix, depth);
          const name = prefix + d.name.text;
          // The first declaration's lines start at `export const`; a function's span is the statement.
          const span = i === 0 && node.declarationList.declarations.length === 1 ? node : d;
          if (isFunctionValue(d.initializer)) {
            add(name, 'function', span);
            inner((d.initializer as TS.ArrowFunction | TS.FunctionExpression).body, `${name}.`, depth);
          } else if (d.initializer && ts.isClassExpression(d.initializer)) visitClass(name, d.initializer, depth);
          else {
            if (exported) add(name, 'variable', span);
            inner(d.initializer, prefix, depth);
          }
        });
      } else inner(node, prefix, depth);
    }
  };
  visit(source.statements, '');
  return out;
}
