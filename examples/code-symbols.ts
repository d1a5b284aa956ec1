/**
 * The symbols and imports memcore reads from code files: `npx tsx examples/code-symbols.ts <file>...`
 * (any of TS/JS, Python, Go, Rust, Java, C#, C, C++, Ruby, PHP, Bash). With no file, a Python
 * sample. Nothing is stored; import-code stores the same symbols as code locations.
 */
import { readFile } from 'node:fs/promises';
import { extractCode, languageOf } from '../src/index.js';

const SAMPLE = `from .base import Shape


class Square(Shape):
    """A square."""

    def area(self) -> float:
        return self.side ** 2
`;

const files = process.argv.slice(2);
for (const [path, text] of files.length > 0
  ? await Promise.all(files.map(async (f) => [f, await readFile(f, 'utf8')] as const))
  : [['shapes/square.py', SAMPLE] as const]) {
  const code = await extractCode(path, text);
  console.log(`${path} (${languageOf(path) ?? 'not code'})`);
  if (!code) continue;
  for (const s of code.symbols.slice(1))
    console.log(
      `  ${s.kind} ${s.symbol} lines ${s.startLine}-${s.endLine}${s.signature ? `: ${s.signature}` : ''}${s.doc ? ` — ${s.doc}` : ''}`,
    );
  if (code.imports.length > 0) console.log(`  imports: ${JSON.stringify(code.imports)}`);
}
