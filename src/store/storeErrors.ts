/**
 * What a user sees when a store's native library fails: the folder, what could not be read, and
 * what to do; never a Rust or C++ source path. LanceDB reports a truncated data file as
 * `LanceError(IO): … failed to fill whole buffer, /rustc/…/function.rs:250:5`.
 */
import { MemcoreError } from '../model/errors.js';

/** The native message's first line without source locations and the wrappers' prefixes. */
export function nativeDetail(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return (message.split('\n')[0] ?? '')
    .replace(/\s+Caused by:.*$/, '')
    .replace(/,?\s*(\/rustc\/[0-9a-f]+)?\/?[\w./-]*\.(rs|cpp|cc|h|hpp):\d+(:\d+)?/g, '')
    .replace(/^(Failed to [^:]*: )?lance error: /i, '')
    .trim();
}

/** Kuzu lets one process open a folder; this error says another one has it. */
export class FolderInUseError extends MemcoreError {
  constructor(readonly location: string) {
    super(
      `the database at ${location} is open in another process (Kuzu allows one process at a time); close it there first, or run \`memcore serve\` so that every process shares one`,
      'STORE',
    );
    this.name = 'FolderInUseError';
  }
}

/** A STORE error for a failure of `what` (e.g. "the entries table") in `path`; MemcoreErrors and aborts pass as they are. */
export function storeFailure(what: string, path: string, e: unknown): unknown {
  if (e instanceof MemcoreError || (e instanceof Error && e.name === 'AbortError')) return e;
  return new MemcoreError(
    `${path}: ${what} could not be read or written (${nativeDetail(e)}). If the folder was damaged, restore it from a backup, ` +
      'or ingest the memory files again into a new folder; if the disk is full or read-only, free it and retry.',
    'STORE',
  );
}

/**
 * Wraps the named async methods of a store class so that a native error they throw becomes a
 * STORE error naming the store's folder (`location`). One list a class, here rather than a try in
 * every method: a method added later is covered by adding its name.
 */
export function translateNativeErrors<T extends { readonly location: string }>(
  cls: { prototype: T },
  what: string,
  methods: readonly { [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof T][],
): void {
  for (const name of methods) {
    const original = cls.prototype[name] as (...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(cls.prototype, name, {
      value: async function (this: T, ...args: unknown[]) {
        try {
          return await original.apply(this, args);
        } catch (e) {
          throw storeFailure(what, this.location, e);
        }
      },
      writable: true,
      configurable: true,
    });
  }
}
