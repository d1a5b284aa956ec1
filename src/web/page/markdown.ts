import DOMPurify from 'dompurify';
import { marked } from 'marked';

/**
 * An entry's content as HTML: marked renders, DOMPurify keeps only harmless markup (no script,
 * no event handler, no javascript: link, no SVG or MathML). Images are dropped too: a memory entry has no business
 * making the browser fetch an address.
 */
export function renderMarkdown(text: string): DocumentFragment {
  const html = marked.parse(text, { async: false, gfm: true });
  return DOMPurify.sanitize(html, {
    RETURN_DOM_FRAGMENT: true,
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['img', 'style', 'form', 'input', 'button'],
    FORBID_ATTR: ['style'],
  });
}
