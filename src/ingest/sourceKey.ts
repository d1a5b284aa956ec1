import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * The key a file is known by as a source: its path from the folder that holds the database (the
 * project, for the default ./.memcore), with forward slashes, so that the same file has the same
 * key from any working directory and after the project moves. Files outside that folder keep
 * their absolute path.
 */
export function sourceKeyOf(file: string, dbDir: string): string {
  const path = resolve(file);
  const rel = relative(dirname(resolve(dbDir)), path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return path;
  return rel.split(sep).join('/');
}
