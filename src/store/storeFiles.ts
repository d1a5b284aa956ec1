/**
 * The files memcore writes into a database folder besides the stores (meta.json, projection.json,
 * journal intents) are checked against schema/store-files.schema.json whenever they are read: a
 * file of the wrong shape stops the open with a STORE error that names it and says what to do,
 * rather than a JavaScript error from deep inside, or a wrong answer.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { MemcoreError } from '../model/errors.js';

export type StoreFileKind = 'meta' | 'projection' | 'intent' | 'sourceManifest';

const schemaUrl = new URL('../../schema/store-files.schema.json', import.meta.url);
let ajv: Ajv | undefined;
const validators = new Map<StoreFileKind, ValidateFunction>();

/** Each kind's validator is compiled when first needed: compiling all four cost an open ~30 ms. */
function validatorOf(kind: StoreFileKind): ValidateFunction {
  let validate = validators.get(kind);
  if (!validate) {
    if (!ajv) {
      ajv = new Ajv({ allErrors: false, strict: false });
      ajv.addSchema(JSON.parse(readFileSync(schemaUrl, 'utf8')) as object, 'store-files');
    }
    validate = ajv.getSchema(`store-files#/definitions/${kind}`)!;
    validators.set(kind, validate);
  }
  return validate;
}

const KIND_NAMES: Record<StoreFileKind, string> = {
  meta: 'meta file',
  projection: 'projection file',
  intent: 'journal intent',
  sourceManifest: 'source manifest',
};

/** What to do about a damaged file of the folder. */
export const RESTORE_ADVICE = 'restore the folder from a backup, or move it aside and ingest the memory files again';

/** A STORE error for a file of the folder that cannot be used as it is. */
export function damagedFile(path: string, problem: string, advice = RESTORE_ADVICE): MemcoreError {
  return new MemcoreError(`${path} ${problem}. memcore wrote it and nothing else should change it: ${advice}`, 'STORE');
}

/** Parses `text` as JSON of the given kind, or throws a STORE error naming `path` and what is wrong. */
export function parseStoreFile<T>(kind: StoreFileKind, path: string, text: string, advice = RESTORE_ADVICE): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw damagedFile(path, `is not valid JSON (${(e as Error).message})`, advice);
  }
  const validate = validatorOf(kind);
  if (!validate(value)) {
    const err = validate.errors![0]!;
    throw damagedFile(
      path,
      `is not a ${KIND_NAMES[kind]} memcore can read: ${err.instancePath || '(top)'} ${err.message ?? 'is invalid'}`,
      advice,
    );
  }
  return value as T;
}

/**
 * What the folder's own `.gitignore` says: nothing in it belongs in git. The folder holds binary
 * stores and, while served, `server.token` (the HTTP bearer secret), so a `git add -A` in the
 * repository around it must not offer them.
 */
export const FOLDER_GITIGNORE = "# memcore's database folder: binary stores and server.token (a secret) stay out of git\n*\n";

/**
 * Writes `<dir>/.gitignore` when the folder has none: at creation, and for a folder made before
 * memcore wrote one. An existing file is left as it is (the user may have changed it). Best
 * effort: a folder that cannot be written to (read-only disk) still opens for reads, and a new one
 * fails at meta.json with the error that says why.
 */
export async function ensureFolderGitignore(dir: string): Promise<void> {
  await writeFile(join(dir, '.gitignore'), FOLDER_GITIGNORE, { flag: 'wx' }).catch(() => undefined);
}
