/**
 * The checks option tables are built from (recipe/searchOptions.ts for every search,
 * engine/readOptions.ts for the other reads): one wording for a refused value wherever it came
 * from, and an OptionError that says `{ option, got, allowed }`.
 */
import { OptionError } from './options.js';

/**
 * `name` is the option as the caller wrote it (`limit`, `fusion.method`), for the message; `path`
 * is where it sits (`hybridSearch.fusion.method`), for OptionError.option.
 */
export type Check = (name: string, v: unknown, path?: string) => void;

export function refuse(path: string, got: unknown, allowed: readonly string[], message: string): never {
  throw new OptionError(path, got, allowed, message);
}

export const int =
  (min: number, max: number): Check =>
  (name, v, path = name) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      refuse(path, v, [`an integer from ${min} to ${max}`], `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  };

export const share: Check = (name, v, path = name) => {
  if (typeof v !== 'number' || !(v >= 0 && v <= 1))
    refuse(path, v, ['a number from 0 to 1'], `${name} must be a number from 0 to 1, got ${JSON.stringify(v)}`);
};

export const flag: Check = (name, v, path = name) => {
  if (typeof v !== 'boolean') refuse(path, v, ['true', 'false'], `${name} must be true or false, got ${JSON.stringify(v)}`);
};

export const oneOf =
  (allowed: readonly string[]): Check =>
  (name, v, path = name) => {
    if (!allowed.includes(v as string)) refuse(path, v, allowed, `${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  };

export const listOf =
  (item: Check, what: string): Check =>
  (name, v, path = name) => {
    if (!Array.isArray(v)) refuse(path, v, [what], `${name} must be a list of ${what}`);
    v.forEach((x) => item(name, x, path));
  };

export const nonEmptyString: Check = (name, v, path = name) => {
  if (typeof v !== 'string' || v === '') refuse(path, v, ['a non-empty string'], `${name} must be a list of non-empty strings`);
};

export const date: Check = (name, v, path = name) => {
  if (!(v instanceof Date) || Number.isNaN(v.getTime()))
    refuse(path, v, ['a valid Date'], `${name} must be a valid Date, got ${JSON.stringify(v)}`);
};

/** A whole number ≥ 0 (an offset, a row count). */
export const wholeNumber: Check = (name, v, path = name) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
    refuse(path, v, ['a whole number ≥ 0'], `${name} must be a whole number ≥ 0, got ${JSON.stringify(v)}`);
};

/** A function (a progress callback). */
export const callback: Check = (name, v, path = name) => {
  if (typeof v !== 'function') refuse(path, v, ['a function'], `${name} must be a function`);
};

/** An AbortSignal. */
export const abortSignal: Check = (name, v, path = name) => {
  if (!(v instanceof AbortSignal)) refuse(path, v, ['an AbortSignal'], `${name} must be an AbortSignal`);
};
