#!/usr/bin/env node
// Fails when the modules under src/ import each other in a circle (docs/architecture.md, "Invariants").
// Every static import and re-export counts, type-only ones included: a circle of types is still a
// circle for a reader. Dynamic import() is how a module loads a heavy part late, and is not counted.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? 'src');
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) files.push(path);
  }
})(root);

const known = new Set(files);
const edges = new Map();
const IMPORT = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"](\.{1,2}\/[^'"]+)['"]/gm;
for (const file of files) {
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const to = new Set();
  for (const [, spec] of text.matchAll(IMPORT)) {
    const base = resolve(dirname(file), spec);
    const target = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), `${base}.ts`, join(base, 'index.ts')].find((p) => known.has(p));
    if (target) to.add(target);
  }
  edges.set(file, [...to]);
}

// Tarjan's strongly connected components: every component of more than one module is a circle.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const circles = [];
function connect(v) {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || edges.get(v).includes(v)) circles.push(component);
  }
}
for (const file of files) if (!index.has(file)) connect(file);

const name = (p) => relative(process.cwd(), p);
if (circles.length === 0) {
  console.log(`no import circles among ${files.length} modules under ${name(root)}`);
  process.exit(0);
}
console.error(`${circles.length} import circle(s) under ${name(root)}; break each by moving the shared type or default to the lower module:`);
for (const c of circles) {
  const members = new Set(c);
  console.error(`- ${c.map(name).sort().join(' ↔ ')}`);
  for (const m of c) for (const to of edges.get(m)) if (members.has(to)) console.error(`    ${name(m)} imports ${name(to)}`);
}
process.exit(1);
