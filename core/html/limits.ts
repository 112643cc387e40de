import { AppError } from '../errors';
import { Parser } from 'htmlparser2';

/**
 * Nesting beyond this is refused: conversion cost grows much faster than the input, and deep trees overflow the stack.
 */
export const MAX_HTML_DEPTH = 1000;

/**
 * The deepest element nesting of a document, measured by the same parser family cheerio uses (so implicit closes
 * of `<p>`, `<li>` and the like count as closes). Linear in the input; stops early once `stopAt` is exceeded.
 */
export function htmlDepth(html: string, stopAt = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let stopped = false;
  const parser = new Parser(
    {
      onopentag() {
        depth += 1;
        if (depth > max) max = depth;
        if (max > stopAt && !stopped) {
          stopped = true;
          parser.pause();
        }
      },
      onclosetag() {
        depth = Math.max(0, depth - 1);
      },
    },
    { decodeEntities: false, lowerCaseTags: true },
  );
  parser.write(html);
  if (!stopped) parser.end();
  return max;
}

/** 422 `UNPROCESSABLE_INPUT`: its conversion cost grows much faster than its size. */
export class HtmlTooDeepError extends AppError {
  constructor(readonly limit: number) {
    super('UNPROCESSABLE_INPUT', `The HTML nests elements more than ${limit} levels deep.`, { max_depth: limit });
    this.name = 'HtmlTooDeepError';
  }
}

export function assertHtmlDepth(html: string, limit = MAX_HTML_DEPTH): void {
  if (htmlDepth(html, limit) > limit) throw new HtmlTooDeepError(limit);
}
