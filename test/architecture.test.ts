import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const page = readFileSync(`${root}docs/architecture.md`, 'utf8');

/** Every repository path the page names in backticks (`src/…`, `schema/…`, `test/…`, …). */
function namedPaths(text: string): string[] {
  const paths = new Set<string>();
  for (const [, span] of text.matchAll(/`([^`\s]+)`/g)) {
    const path = span!.replace(/[.,:;]+$/, '');
    if (/^(src|schema|test|bench|examples|docs|\.ci)\//.test(path)) paths.add(path);
  }
  return [...paths];
}

/** The files a bare name (`stores.ts`) in a folder's paragraph refers to: the folder's own. */
function folderParagraphs(text: string): { folder: string; names: string[] }[] {
  return [...text.matchAll(/^- \*\*`(src\/[^`]+\/)`\*\* — ([\s\S]*?)(?=^- \*\*|^\S|\n\n)/gm)].map(([, folder, body]) => ({
    folder: folder!,
    names: [...body!.matchAll(/`([A-Za-z][\w.]*\.ts)`/g)].map((m) => m[1]!),
  }));
}

describe('docs/architecture.md', () => {
  it('names only paths that exist', () => {
    const named = namedPaths(page);
    expect(named.length).toBeGreaterThan(40);
    expect(named.filter((p) => !existsSync(`${root}${p}`))).toEqual([]);
  });

  it("names, in each folder's paragraph, only files of that folder or its subfolders", () => {
    const paragraphs = folderParagraphs(page);
    expect(paragraphs.length).toBeGreaterThan(15);
    const missing = paragraphs.flatMap(({ folder, names }) =>
      names
        .filter((name) => !name.includes('/'))
        .filter((name) => !findUnder(`${root}${folder}`, name))
        .map((name) => `${folder}${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('maps every folder under src/', () => {
    const folders = readdirSync(`${root}src`, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `src/${d.name}/`);
    expect(folders.filter((f) => !page.includes(`\`${f}\``))).toEqual([]);
  });
});

function findUnder(dir: string, name: string): boolean {
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isFile() && d.name === name) return true;
    if (d.isDirectory() && findUnder(`${dir}/${d.name}`, name)) return true;
  }
  return false;
}
