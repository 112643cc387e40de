import { AppError } from '../../core/errors';

/** Default of `MAX_JSON_DEPTH`: how deep arrays and objects may nest in a JSON body or a JSON form field. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Refuses JSON text whose arrays and objects nest deeper than `maxDepth`, in one pass over the raw text (no
 * recursion, no parse): brackets inside strings do not count. Run before `JSON.parse`, so nothing downstream (the
 * parser, zod, hashing, the job engine's payloads) ever sees a structure deep enough to exhaust a stack. Malformed
 * text passes and is left for `JSON.parse` to refuse.
 */
export function checkJsonDepth(text: string, maxDepth: number, path = ''): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) {
        const message = `JSON nested deeper than ${maxDepth} levels (MAX_JSON_DEPTH)`;
        throw new AppError('VALIDATION_ERROR', `The request's JSON is nested deeper than ${maxDepth} levels.`, {
          issues: [{ path, message }],
          max_depth: maxDepth,
        });
      }
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
}

/** A malformed JSON body or field: 400 `VALIDATION_ERROR`. */
export const malformedJson = (path = '') =>
  new AppError('VALIDATION_ERROR', 'The request body is not valid JSON.', {
    issues: [{ path, message: 'malformed JSON' }],
  });

/** True for form field text that is JSON with arrays or objects (what `checkJsonDepth` must see). */
export const looksLikeJsonStructure = (text: string): boolean => /^\s*[[{]/.test(text);

/**
 * Parses a JSON request body: the depth checked first, then `JSON.parse`. An empty body is `{}`; anything but an
 * object or an array at the top is refused (a strict JSON body).
 */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text.trim() === '') return {};
  checkJsonDepth(text, maxDepth);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformedJson();
  }
  if (typeof value !== 'object' || value === null) throw malformedJson();
  return value;
}
