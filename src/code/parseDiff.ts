/**
 * A unified diff as git prints it (`git diff`, `git show`, a .patch file) read into what changed:
 * files with how they changed, the line ranges touched in the new file (in the old one for a
 * deleted file), and the text added. Binary files and paths that would leave the repository are
 * skipped with a note rather than trusted.
 */

export type FileChange = 'modified' | 'added' | 'deleted' | 'renamed';

export interface ChangedFile {
  /** The path after the change (before it, for a deleted file), relative to the repository. */
  path: string;
  /** The path before a rename. */
  oldPath: string | null;
  change: FileChange;
  /** 1-based inclusive line ranges touched: in the new file, or in the old one when it was deleted. */
  ranges: { start: number; end: number }[];
  /** Lines added, as written (at most MAX_ADDED_LINES a file). */
  added: string[];
}

export interface ParsedDiff {
  files: ChangedFile[];
  /** What was left out, and why (binary files, unsafe paths). */
  skipped: { path: string; reason: string }[];
}

/** Added lines kept a file: the task is made from the first of them, and a huge hunk is not read whole. */
export const MAX_ADDED_LINES = 400;

/** Git's quoted path ("a/sp\303\244ce \"x\"") as text; null when it does not decode. */
function unquote(raw: string): string | null {
  if (!raw.startsWith('"')) return raw;
  if (!raw.endsWith('"') || raw.length < 2) return null;
  const bytes: number[] = [];
  const body = raw.slice(1, -1);
  const escapes: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, '\\': 92, a: 7, b: 8, f: 12, v: 11 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body[++i];
    if (next === undefined) return null;
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else if (escapes[next] !== undefined) bytes.push(escapes[next]!);
    else return null;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A diff path without its a/ or b/ prefix; null for /dev/null. */
function diffPath(raw: string): string | null {
  const text = unquote(raw.replace(/\t.*$/, '').trimEnd());
  if (text === null || text === '/dev/null') return null;
  return text.replace(/^[ab]\//, '');
}

/** Why a path cannot be used, or null: absolute, `..`, control characters. */
export function unsafePath(path: string): string | null {
  if (path === '') return 'an empty path';
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'a path with control characters';
  if (path.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(path)) return 'an absolute path';
  if (path.split(/[\\/]/).includes('..')) return 'a path that leaves the repository (..)';
  return null;
}

export function parseDiff(text: string): ParsedDiff {
  const files: ChangedFile[] = [];
  const skipped: ParsedDiff['skipped'] = [];
  let file: (ChangedFile & { binary: boolean; minus: string | null; plus: string | null }) | null = null;
  let newLine = 0;
  let oldLine = 0;

  const finish = () => {
    if (!file) return;
    const path = file.change === 'deleted' ? (file.minus ?? file.path) : (file.plus ?? file.path);
    const problem = unsafePath(path) ?? (file.oldPath !== null ? unsafePath(file.oldPath) : null);
    if (problem) skipped.push({ path, reason: problem });
    else if (file.binary) skipped.push({ path, reason: 'a binary file' });
    else
      files.push({
        path,
        oldPath: file.change === 'renamed' ? file.oldPath : null,
        change: file.change,
        ranges: merge(file.ranges),
        added: file.added,
      });
    file = null;
  };
  const touch = (line: number) => {
    const last = file!.ranges.at(-1);
    if (last && line <= last.end + 1 && line >= last.start) last.end = Math.max(last.end, line);
    else file!.ranges.push({ start: line, end: line });
  };

  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      finish();
      const m = /^diff --git (?:"[^"]*"|\S+) (.+)$/.exec(line);
      file = {
        path: diffPath(m?.[1] ?? '') ?? '',
        oldPath: null,
        change: 'modified',
        ranges: [],
        added: [],
        binary: false,
        minus: null,
        plus: null,
      };
      continue;
    }
    if (!file) continue; // text before the first file (a commit message)
    if (line.startsWith('new file mode')) file.change = 'added';
    else if (line.startsWith('deleted file mode')) file.change = 'deleted';
    else if (line.startsWith('rename from ')) [file.change, file.oldPath] = ['renamed', unquote(line.slice(12))];
    else if (line.startsWith('rename to ')) file.path = unquote(line.slice(10)) ?? file.path;
    else if (line.startsWith('Binary files ') || line === 'GIT binary patch') file.binary = true;
    else if (line.startsWith('--- ')) file.minus = diffPath(line.slice(4));
    else if (line.startsWith('+++ ')) file.plus = diffPath(line.slice(4));
    else if (line.startsWith('@@')) {
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (!m) continue;
      oldLine = Number(m[1]);
      newLine = Number(m[2]);
      // A hunk that only deletes marks the place in the new file where the lines were.
      if (m[3] === '0' && file.change !== 'deleted') touch(Math.max(1, newLine));
    } else if (line.startsWith('+')) {
      touch(newLine++);
      if (file.added.length < MAX_ADDED_LINES) file.added.push(line.slice(1));
    } else if (line.startsWith('-')) {
      if (file.change === 'deleted') touch(oldLine);
      oldLine++;
    } else if (line.startsWith(' ')) {
      newLine++;
      oldLine++;
    }
  }
  finish();
  return { files, skipped };
}

function merge(ranges: { start: number; end: number }[]): { start: number; end: number }[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const out: { start: number; end: number }[] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r.start <= last.end + 1) last.end = Math.max(last.end, r.end);
    else out.push({ ...r });
  }
  return out;
}
