/**
 * The source files import-code records beyond the ones it parses: every text source file of a
 * common language gets at least a file-level code location (keyed as the parsed ones are, so
 * `codebase:path`), and the words of each file go to the code search index. The symbols of a file
 * come from its language's extractor when there is one (codeSymbols for TypeScript and
 * JavaScript), else the file alone.
 */
import { codeLanguage, codeSymbols, fingerprintOf, type CodeSymbol } from './codeSymbols.js';

/** Source extensions by language, beside the TypeScript and JavaScript ones codeSymbols parses. */
const OTHER_SOURCES: Record<string, string> = {
  '.py': 'python',
  '.pyi': 'python',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
  '.kt': 'kotlin',
  '.kts': 'kotlin',
  '.scala': 'scala',
  '.rb': 'ruby',
  '.php': 'php',
  '.c': 'c',
  '.h': 'c',
  '.cc': 'cpp',
  '.cpp': 'cpp',
  '.cxx': 'cpp',
  '.hpp': 'cpp',
  '.hh': 'cpp',
  '.cs': 'csharp',
  '.swift': 'swift',
  '.m': 'objective-c',
  '.lua': 'lua',
  '.ex': 'elixir',
  '.exs': 'elixir',
  '.erl': 'erlang',
  '.hs': 'haskell',
  '.ml': 'ocaml',
  '.clj': 'clojure',
  '.dart': 'dart',
  '.jl': 'julia',
  '.r': 'r',
  '.sh': 'shell',
  '.vue': 'vue',
  '.svelte': 'svelte',
};

/** The language of a source file import-code records, or null for a file it leaves alone. */
export function sourceLanguage(name: string): string | null {
  const parsed = codeLanguage(name);
  if (parsed) return parsed.language;
  if (/\.d\.[cm]?ts$/.test(name) || /\.min\.[cm]?js$/.test(name)) return null;
  const dot = name.lastIndexOf('.');
  return dot < 0 ? null : (OTHER_SOURCES[name.slice(dot).toLowerCase()] ?? null);
}

/** A file's symbols: its language's extractor's where one exists, else only the file. */
export function sourceSymbols(path: string, text: string): CodeSymbol[] {
  if (codeLanguage(path)) return codeSymbols(path, text);
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  return [{ symbol: null, kind: 'file', startLine: 1, endLine: Math.max(1, lines), fingerprint: fingerprintOf(text) }];
}

/**
 * What a file imports, as written (`./util`, `click.core`, `.parser`, `github.com/x/y/doc`): read
 * with patterns, not parsed, so a string that looks like an import may count. The code search
 * index resolves them against the codebase's files (CodeSearchIndex.importsOf).
 */
export function importSpecifiers(language: string, text: string): string[] {
  const out = new Set<string>();
  const add = (s: string | undefined) => s && s.length < 200 && out.add(s);
  if (language === 'typescript' || language === 'javascript' || language === 'vue' || language === 'svelte') {
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"\n]+)['"]/g)) add(m[1]);
  } else if (language === 'python') {
    for (const m of text.matchAll(/^\s*from\s+(\.*[\w.]*)\s+import\b/gm)) add(m[1]);
    for (const m of text.matchAll(/^\s*import\s+([\w.]+(?:\s*,\s*[\w.]+)*)/gm)) for (const s of m[1]!.split(',')) add(s.trim());
  } else if (language === 'go') {
    for (const m of text.matchAll(/^import\s*\(([\s\S]*?)\)|^import\s+(?:\w+\s+)?"([^"]+)"/gm)) {
      if (m[2]) add(m[2]);
      else for (const q of m[1]!.matchAll(/"([^"\n]+)"/g)) add(q[1]);
    }
  }
  return [...out];
}
