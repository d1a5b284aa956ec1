/**
 * Option bags at the public boundary: a name the method does not know is an error, never ignored.
 * A misspelt `maxEntires` or an option from another method (`minImportance` on a build without it)
 * would otherwise change nothing and say nothing.
 */
import { MemcoreError } from './errors.js';

/** An option that is not accepted: which one, what was given, what is allowed. */
export class OptionError extends MemcoreError {
  constructor(
    /** The option's dotted path, e.g. `buildTaskContext.weights.simlarity`. */
    readonly option: string,
    readonly got: unknown,
    /** The names or values accepted there. */
    readonly allowed: readonly string[],
    message: string,
  ) {
    super(message, 'INVALID_INPUT');
    this.name = 'OptionError';
  }
}

/**
 * Every key of `T`, listed once: the compiler refuses a list that misses one, so a new option
 * cannot be added to a type without being added to its check.
 */
export function optionNames<T extends object>() {
  return <const K extends readonly (keyof T & string)[]>(
    names: K & (Exclude<keyof T & string, K[number]> extends never ? unknown : never),
  ): readonly string[] => names;
}

/**
 * Throws an OptionError for the first own key of `options` that is not in `allowed`. `where` names
 * the method (and, for nested bags, the path), e.g. `hybridSearch` or `buildTaskContext.fusion`.
 * Undefined and null bags pass: every option is optional.
 */
export function checkOptionNames(where: string, options: unknown, allowed: readonly string[]): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new OptionError(where, options, allowed, `${where} takes an options object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (allowed.includes(key)) continue;
    const near = allowed.find((a) => a.toLowerCase() === key.toLowerCase()) ?? closest(key, allowed);
    throw new OptionError(
      `${where}.${key}`,
      (options as Record<string, unknown>)[key],
      allowed,
      `${where}: unknown option "${key}"${near ? ` (did you mean "${near}"?)` : ''}; it takes ${allowed.join(', ')}`,
    );
  }
}

function describe(v: unknown): string {
  return Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v;
}

/** The allowed name within two edits of `key`, if one is (also the CLI's "did you mean"). */
export function closest(key: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const a of allowed) {
    const d = editDistance(key.toLowerCase(), a.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [a, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
