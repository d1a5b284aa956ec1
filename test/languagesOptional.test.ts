import { describe, expect, it } from 'vitest';
import { extractCode, grammarInstalled, languageOf } from '../src/code/languages/index.js';

/**
 * Kotlin and Scala grammars are optional packages (about 50 MB each): without them a file is
 * file-level only; with them (`npm install @tree-sitter-grammars/tree-sitter-kotlin
 * tree-sitter-scala`) memcore finds and uses them.
 */
const KOTLIN = `package shapes.core

import shapes.geom.Calc

/** A square. */
class Square {
    fun area(): Int {
        return Calc.times(2, 2)
    }
}

interface Shape {
    fun area(): Int
}

object Registry {
    fun all() = listOf<Shape>()
}

fun build() = Square()

const val MAX_SIDES = 12
`;

const SCALA = `package shapes

import shapes.geom.Calc

class Square(side: Int) {
  def area(): Int = Calc.times(side, side)
}

trait Shape { def area(): Int }

object Registry { def all = List() }

enum Color { case Red }
`;

const symbols = async (path: string, text: string) =>
  (await extractCode(path, text))?.symbols.slice(1).map((s) => `${s.symbol} ${s.kind} ${s.startLine}-${s.endLine}`) ?? null;

describe('optional grammars: Kotlin and Scala', () => {
  it('names the language either way, and gives no symbols while the grammar is missing', async () => {
    expect(languageOf('src/App.kt')).toBe('kotlin');
    expect(languageOf('src/App.scala')).toBe('scala');
    if (!grammarInstalled('a.kt')) expect(await extractCode('a.kt', KOTLIN)).toBeNull();
    if (!grammarInstalled('a.scala')) expect(await extractCode('a.scala', SCALA)).toBeNull();
  });

  it.skipIf(!grammarInstalled('a.kt'))('reads Kotlin when its grammar is installed', async () => {
    expect(await symbols('a.kt', KOTLIN)).toEqual([
      'Square class 6-10',
      'Square.area method 7-9',
      'Shape class 12-14',
      'Shape.area method 13-13',
      'Registry class 16-18',
      'Registry.all method 17-17',
      'build function 20-20',
      'MAX_SIDES constant 22-22',
    ]);
    expect((await extractCode('a.kt', KOTLIN))!.symbols[1]).toMatchObject({ doc: 'A square.', signature: 'class Square' });
  });

  it.skipIf(!grammarInstalled('a.scala'))('reads Scala when its grammar is installed', async () => {
    expect(await symbols('a.scala', SCALA)).toEqual([
      'Square class 5-7',
      'Square.area method 6-6',
      'Shape trait 9-9',
      'Shape.area method 9-9',
      'Registry class 11-11',
      'Registry.all method 11-11',
      'Color enum 13-13',
    ]);
  });
});
