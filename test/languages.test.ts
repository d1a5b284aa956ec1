import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractCode, languageOf, resolveImports, TREE_SITTER_LANGUAGES, type ImportRef } from '../src/code/languages/index.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'languages');
const FACTS = { goModules: [{ dir: '', module: 'example.com/shapes' }], psr4: [{ prefix: 'App\\', dirs: ['src'] }] };

/** Every definition of each fixture: `symbol kind start-end`, the file's own location left out. */
const EXPECTED: Record<string, string[]> = {
  'Sample.cs': [
    'Example.Shapes namespace 4-27',
    'Example.Shapes.Square class 7-18',
    'Example.Shapes.Square.Square method 11-11',
    'Example.Shapes.Square.Area method 14-17',
    'Example.Shapes.IShape interface 20-20',
    'Example.Shapes.IShape.Area method 20-20',
    'Example.Shapes.Point struct 22-22',
    'Example.Shapes.Color enum 24-24',
    'Example.Shapes.Size class 26-26',
  ],
  'Sample.java': [
    'Square class 7-24',
    'Square.Square method 11-13',
    'Square.area method 16-19',
    'Square.Inner class 21-23',
    'Square.Inner.run method 22-22',
    'Shape interface 26-28',
    'Shape.area method 27-27',
    'Color enum 30-30',
    'Point class 32-32',
  ],
  'sample.c': [
    'point struct 5-7',
    'size_t2 type 9-9',
    'value struct 11-11',
    'color enum 13-13',
    'area function 16-19',
    'name_of function 21-23',
    'main function 25-28',
  ],
  'sample.cpp': [
    'shapes namespace 4-27',
    'shapes::Square class 7-14',
    'shapes::Square::Square method 9-9',
    'shapes::Square::area method 10-10',
    'shapes::Square::~Square function 16-16',
    'shapes::Point struct 18-18',
    'shapes::twice function 23-25',
    'shapes::scale function 29-31',
    'Sides type 33-33',
  ],
  'sample.go': [
    'MaxSides constant 10-10',
    'Red constant 13-13',
    'Green constant 14-14',
    'Square struct 18-20',
    'Shape interface 22-24',
    'Sides type 26-26',
    'Box struct 28-28',
    'Square.Area method 31-33',
    'Box.Get method 35-35',
    'New function 38-41',
  ],
  'sample.php': [
    'App\\Shapes namespace 2-2',
    'Shape interface 8-11',
    'Shape::area method 10-10',
    'Named trait 13-16',
    'Named::name method 15-15',
    'Square class 19-30',
    'Square::__construct method 23-23',
    'Square::area method 26-29',
    'Color enum 32-35',
    'build function 37-40',
  ],
  'sample.py': [
    'MAX_SIDES constant 6-6',
    'Square class 10-24',
    'Square.__init__ method 13-14',
    'Square.area method 17-18',
    'Square.name method 21-24',
    'Square.name.inner function 22-23',
    'build function 27-29',
  ],
  'sample.rb': [
    'MAX_SIDES constant 4-4',
    'Shapes module 7-25',
    'Shapes::Square class 9-24',
    'Shapes::Square::SIDES constant 10-10',
    'Shapes::Square#initialize method 12-14',
    'Shapes::Square#area method 17-19',
    'Shapes::Square.unit method 21-23',
    'helper function 27-29',
  ],
  'sample.rs': [
    'geom module 2-2',
    'MAX_SIDES constant 6-6',
    'NAME constant 7-7',
    'Square struct 11-13',
    'Color enum 15-18',
    'Shape trait 20-22',
    'Shape::area method 21-21',
    'Sides type 24-24',
    'Square::new method 28-30',
    'Wrapper::area method 34-36',
    'inner module 39-43',
    'inner::helper function 40-42',
    'main function 45-47',
  ],
  'sample.sh': ['greet function 5-7', 'cleanup function 9-11'],
};

const symbolsOf = async (name: string) => (await extractCode(name, await readFile(join(FIXTURES, name), 'utf8'), FACTS))!;

describe('languages: one tree-sitter extractor per language', () => {
  it('has a fixture for every language, each giving its definitions with qualified names, kinds and lines', async () => {
    const files = (await readdir(FIXTURES)).sort();
    expect(new Set(files.map((f) => languageOf(f)))).toEqual(new Set(TREE_SITTER_LANGUAGES.map((l) => l.name)));
    for (const file of files) {
      const { symbols, syntaxErrors } = await symbolsOf(file);
      expect(syntaxErrors, file).toBe(false);
      expect(symbols[0]).toMatchObject({ symbol: null, kind: 'file', startLine: 1 });
      expect(
        symbols.slice(1).map((s) => `${s.symbol} ${s.kind} ${s.startLine}-${s.endLine}`),
        file,
      ).toEqual(EXPECTED[file]);
    }
  });

  it('reads doc comments, docstrings and signatures', async () => {
    const doc = async (file: string, symbol: string) => (await symbolsOf(file)).symbols.find((s) => s.symbol === symbol);
    expect(await doc('sample.py', 'build')).toMatchObject({ doc: 'Builds a square.', signature: 'async def build(side: float) -> Square' });
    expect(await doc('sample.py', 'Square.area')).toMatchObject({ doc: 'The area.' });
    expect(await doc('sample.go', 'Square.Area')).toMatchObject({
      doc: "Area is the square's area.",
      signature: 'func (s *Square) Area() float64',
    });
    expect(await doc('sample.go', 'Square')).toMatchObject({ doc: 'Square is a shape with four equal sides.' });
    // a doc comment above an attribute is the definition's; an inner `//!` comment is the file's
    expect(await doc('sample.rs', 'Square')).toMatchObject({ doc: 'A square.', signature: 'pub struct Square' });
    expect((await doc('sample.rs', 'geom'))!.doc).toBeUndefined();
    expect(await doc('Sample.java', 'Square.area')).toMatchObject({ doc: 'The area.' });
    expect(await doc('Sample.cs', 'Example.Shapes.Square.Area')).toMatchObject({ doc: '<summary>The area.</summary>' });
    expect(await doc('sample.c', 'area')).toMatchObject({ doc: 'The area of a rectangle.', signature: 'static int area(int w, int h)' });
    expect(await doc('sample.cpp', 'shapes::Square')).toMatchObject({ doc: 'A square.' });
    expect(await doc('sample.rb', 'Shapes::Square#area')).toMatchObject({ doc: 'The area.', signature: 'def area' });
    expect(await doc('sample.php', 'Square::area')).toMatchObject({ doc: 'The area.', signature: 'public function area(): float' });
    expect(await doc('sample.sh', 'greet')).toMatchObject({ doc: 'Says hello.' });
  });

  it('fingerprints a definition by its text: the same after a move, new after an edit', async () => {
    const text = await readFile(join(FIXTURES, 'sample.go'), 'utf8');
    const at = (t: string) => extractCode('a.go', t).then((x) => x!.symbols.find((s) => s.symbol === 'New')!);
    const [before, moved, edited] = await Promise.all([
      at(text),
      at(text.replace('package shapes\n', 'package shapes\n\n\n')),
      at(text.replace('return &Square{Side: side}', 'return &Square{Side: side * 2}')),
    ]);
    expect(moved.fingerprint).toBe(before.fingerprint);
    expect(moved.startLine).toBe(before.startLine + 2);
    expect(edited.fingerprint).not.toBe(before.fingerprint);
  });

  it('keeps what parses in a file with a syntax error, and says so', async () => {
    const x = (await extractCode('broken.py', 'def good():\n    return 1\n\ndef bad(:\n    pass\n\nclass Later:\n    pass\n'))!;
    expect(x.syntaxErrors).toBe(true);
    expect(x.symbols.map((s) => s.symbol)).toEqual(expect.arrayContaining(['good', 'Later']));
  });

  it('resolves imports to the repository files they name, as each language does', async () => {
    const files = new Set([
      'pkg/shapes/base.py',
      'pkg/shapes/util.py',
      'pkg/shapes/sample.py',
      'src/pkg/helpers/__init__.py',
      'internal/geom/geom.go',
      'internal/geom/geom_test.go',
      'shapes.go',
      'src/main.rs',
      'src/sample.rs',
      'src/sample/geom.rs',
      'src/util/math.rs',
      'com/example/shapes/geom/Geom.java',
      'com/example/shapes/Sample.java',
      'Geometry/Geom.cs',
      'Shapes/Sample.cs',
      'c/sample.c',
      'c/geom.h',
      'cpp/sample.cpp',
      'include/geom.hpp',
      'lib/sample.rb',
      'lib/geom.rb',
      'src/Shapes/sample.php',
      'src/Geom/Calc.php',
    ]);
    const bySuffix = (suffix: string) => [...files].find((f) => f === suffix || f.endsWith(`/${suffix}`)) ?? null;
    const declaring = (ns: string) => (ns === 'Example.Geometry' ? ['Geometry/Geom.cs'] : []);
    const resolved = async (fixture: string, path: string) => {
      const refs: ImportRef[] = (await extractCode(path, await readFile(join(FIXTURES, fixture), 'utf8'), FACTS))!.imports;
      return resolveImports(path, refs, { files, bySuffix, declaring });
    };
    expect(await resolved('sample.py', 'pkg/shapes/sample.py')).toEqual([
      'pkg/shapes/base.py',
      'pkg/shapes/util.py',
      'src/pkg/helpers/__init__.py',
    ]);
    expect(await resolved('sample.go', 'shapes.go')).toEqual(['internal/geom/geom.go']);
    expect(await resolved('sample.rs', 'src/sample.rs')).toEqual(['src/sample/geom.rs', 'src/util/math.rs']);
    expect(await resolved('Sample.java', 'com/example/shapes/Sample.java')).toEqual(['com/example/shapes/geom/Geom.java']);
    expect(await resolved('Sample.cs', 'Shapes/Sample.cs')).toEqual(['Geometry/Geom.cs']);
    expect(await resolved('sample.c', 'c/sample.c')).toEqual(['c/geom.h']);
    expect(await resolved('sample.cpp', 'cpp/sample.cpp')).toEqual(['include/geom.hpp']);
    expect(await resolved('sample.rb', 'lib/sample.rb')).toEqual(['lib/geom.rb']);
    expect(await resolved('sample.php', 'src/Shapes/sample.php')).toEqual(['src/Geom/Calc.php']);
  });
});
