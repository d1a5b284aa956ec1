import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';

/** Every error memcore throws on purpose is a MemcoreError with a stable `code`. */
export class MemcoreError extends Error {
  constructor(
    message: string,
    readonly code: 'INVALID_INPUT' | 'INVALID_FILE' | 'NOT_FOUND' | 'EMBEDDING' | 'STORE' | 'MODEL_MISMATCH',
  ) {
    super(message);
    this.name = 'MemcoreError';
  }
}

/** Bad input in a memory file: says which file, which record and which field. */
export class MemoryFileError extends MemcoreError {
  constructor(
    readonly file: string,
    readonly record: string | null,
    readonly field: string | null,
    readonly problem: string,
  ) {
    super([file, record, field ? `field "${field}"` : null].filter((p) => p !== null).join(': ') + `: ${problem}`, 'INVALID_FILE');
    this.name = 'MemoryFileError';
  }
}

export function invalidInput(message: string): MemcoreError {
  return new MemcoreError(message, 'INVALID_INPUT');
}

/** `path` made absolute, or INVALID_INPUT (`${where}: <path> is not a folder`) when it is not a folder. */
export async function requireFolder(where: string, path: string): Promise<string> {
  const abs = resolve(path);
  if (!(await stat(abs).catch(() => null))?.isDirectory()) throw invalidInput(`${where}: ${path} is not a folder`);
  return abs;
}

/** Throws the signal's reason as an AbortError when it has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof Error && reason.name === 'AbortError') throw reason;
    const err = new Error('The operation was aborted', { cause: reason });
    err.name = 'AbortError';
    throw err;
  }
}
