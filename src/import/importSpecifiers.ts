/**
 * What a file imports as written, for the code search index's `imports` signal: read with patterns,
 * so it needs no grammar (the graph's IMPORTS links come from the language extractors).
 */
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
