/**
 * A markdown file as sections: the text under each heading up to the next heading, with the
 * heading's ancestors, its GitHub anchor, and the links written in it. Parsed by remark (mdast),
 * so headings inside code fences, setext headings and HTML blocks are what CommonMark says they
 * are; a section's content is the author's own markdown, sliced from the file.
 */
import GithubSlugger from 'github-slugger';
import type { Heading, Link, Nodes, Root, Yaml } from 'mdast';
import { toString } from 'mdast-util-to-string';
import { parse as parseYaml } from 'yaml';

export interface MarkdownSection {
  /** The heading's text; null for the text before the first heading. */
  heading: string | null;
  /** Texts of the enclosing headings, outermost first. */
  parents: string[];
  /** 1–6; 0 for the text before the first heading. */
  depth: number;
  /** GitHub's anchor of the heading ('' before the first heading). */
  anchor: string;
  /** The markdown under the heading, up to the next heading, trimmed. */
  content: string;
  /** 1-based line of the heading (of the content, before the first heading). */
  line: number;
  /** Link targets written in the section (URLs as written). */
  links: string[];
}

export interface MarkdownDocument {
  /** The YAML front matter as an object ({} without). */
  frontMatter: Record<string, unknown>;
  /** The document's title: its first level-1 heading, else its first heading (null without headings). */
  title: string | null;
  sections: MarkdownSection[];
}

/** A file that cannot be imported as it is: the message says where and why. */
export class MarkdownError extends Error {}

/** Headings longer than this are cut (with "…") to make a title. */
export const MAX_HEADING_CHARS = 200;

const clean = (text: string) => text.replace(/\s+/g, ' ').trim();
const cut = (text: string) => ([...text].length > MAX_HEADING_CHARS ? `${[...text].slice(0, MAX_HEADING_CHARS - 1).join('')}…` : text);

function parseFrontMatter(node: Yaml, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseYaml(node.value, { maxAliasCount: 100 });
  } catch (e) {
    throw new MarkdownError(`${file}: the front matter is not valid YAML (${(e as Error).message.split('\n')[0]})`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new MarkdownError(`${file}: the front matter must be a mapping of keys to values`);
  return value as Record<string, unknown>;
}

/** Every link URL under `node`, in order (iterative: a hostile file may nest deeply). */
export function linksUnder(node: Nodes): string[] {
  const out: string[] = [];
  const stack: Nodes[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'link') out.push((n as Link).url);
    if ('children' in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as Nodes);
  }
  return out;
}

/**
 * Block quotes and lists a line may open inside each other. micromark's cost grows with the square
 * of the nesting (100,000 `>` ran for minutes), and no document a team writes nests 32 levels.
 */
export const MAX_NESTING = 32;

export function refuseDeepNesting(file: string, text: string): void {
  const containers = /^(?:[ \t]*(?:>|[*+-](?=[ \t])|\d{1,9}[.)](?=[ \t])))+/gm;
  let line = 1;
  let at = 0;
  for (const m of text.matchAll(containers)) {
    const depth = m[0].match(/>|[*+-]|\d{1,9}[.)]/g)!.length;
    if (depth <= MAX_NESTING) continue;
    for (; at < m.index; at++) if (text.charCodeAt(at) === 10) line++;
    throw new MarkdownError(
      `${file}: line ${line} opens ${depth} block quotes and lists inside each other; memcore reads at most ${MAX_NESTING} (nesting that deep is not a document)`,
    );
  }
}

/** The sections of `text` (`file` names it in errors), given its syntax tree (MarkdownParser). */
export function sectionsOfTree(file: string, text: string, tree: Root): MarkdownDocument {
  let frontMatter: Record<string, unknown> = {};
  const blocks = tree.children;
  let startAt = 0;
  if (blocks[0]?.type === 'yaml') {
    frontMatter = parseFrontMatter(blocks[0], file);
    startAt = blocks[0].position?.end.offset ?? 0;
  }

  const slugger = new GithubSlugger();
  const sections: MarkdownSection[] = [];
  const open: { depth: number; text: string }[] = [];
  let docTitle: { depth: number; text: string } | null = null;
  let current: Omit<MarkdownSection, 'content'> & { from: number; nodes: Nodes[] } = {
    heading: null,
    parents: [],
    depth: 0,
    anchor: '',
    line: 1,
    links: [],
    from: startAt,
    nodes: [],
  };
  const close = (to: number) => {
    const content = text.slice(current.from, to).trim();
    if (content !== '') {
      const { from: _from, nodes, ...section } = current;
      sections.push({ ...section, content, links: nodes.flatMap(linksUnder) });
    }
  };
  for (const node of blocks) {
    if (node.type === 'yaml') continue;
    if (node.type !== 'heading') {
      current.nodes.push(node);
      continue;
    }
    const heading = node as Heading;
    close(heading.position?.start.offset ?? text.length);
    // Inline HTML is not title text: `## Install <!-- omit in toc -->` is titled "Install".
    const words = clean(toString(heading, { includeHtml: false }));
    while (open.length > 0 && open.at(-1)!.depth >= heading.depth) open.pop();
    const title = words === '' ? `(untitled heading, line ${heading.position?.start.line ?? '?'})` : cut(words);
    current = {
      heading: title,
      parents: open.map((o) => o.text),
      depth: heading.depth,
      anchor: slugger.slug(words),
      line: heading.position?.start.line ?? 1,
      links: [],
      from: heading.position?.end.offset ?? text.length,
      nodes: [],
    };
    open.push({ depth: heading.depth, text: title });
    if (!docTitle || (heading.depth === 1 && docTitle.depth !== 1)) docTitle = { depth: heading.depth, text: title };
  }
  close(text.length);
  if (sections[0]?.heading === null) sections[0].line = lineOf(text, sections[0].content);
  return { frontMatter, title: docTitle?.text ?? null, sections };
}

function lineOf(text: string, content: string): number {
  const at = text.indexOf(content);
  return at < 0 ? 1 : text.slice(0, at).split('\n').length;
}
