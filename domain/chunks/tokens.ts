/**
 * Token counts for chunking (contract §14): a named tokenizer whose tables ship inside the `gpt-tokenizer` package
 * (no download; its byte-pair encoder is faster than js-tiktoken's on new words, with the same counts: the tests count
 * every chunk again with js-tiktoken). Counting runs the tokenizer's pre-split (its pattern, one match at a time) and
 * counts each piece once per process: BPE never merges across pieces, so the sum over the pieces is the text's exact count, and the
 * words of a document repeat, so most pieces are a map lookup. Special tokens (`<|endoftext|>`) count as the plain
 * text they are. Pure apart from the tables, loaded on first use (about 0.1 s for `cl100k_base`, once).
 */
import { createRequire } from 'node:module';
import type { TokenizerName } from '../../core/jobs/job-defaults';

export type { TokenizerName };

interface Encoding {
  countTokens(text: string): number;
}
const load = createRequire(import.meta.url);
/** The tokenizer's encoder and its pre-split pattern, loaded on first use (the tables are a few MB each). */
function encoding(name: TokenizerName): { encoder: Encoding; split: RegExp } {
  const split = (load('gpt-tokenizer/cjs/encodingParams/constants') as Record<string, RegExp>)[
    name === 'cl100k_base' ? 'CL100K_TOKEN_SPLIT_REGEX' : 'O200K_TOKEN_SPLIT_REGEX'
  ]!;
  return { encoder: load(`gpt-tokenizer/cjs/encoding/${name}`) as Encoding, split: new RegExp(split.source, 'gu') };
}
/** Pieces remembered per tokenizer before the memory starts again (a piece is a word or a run of punctuation). */
const MEMO_MAX = 200_000;

/**
 * A text's count with its first and last pre-split pieces (their lengths and counts): what the packer needs to count
 * two texts joined without counting them again (chunk-markdown.ts `joinedCount`).
 */
export interface Measure {
  tokens: number;
  /** How many pre-split pieces the text has. */
  pieces: number;
  head: number;
  headTokens: number;
  tail: number;
  tailTokens: number;
}

export interface TokenCounter {
  readonly name: TokenizerName;
  count(text: string): number;
  measure(text: string): Measure;
}

const counters = new Map<TokenizerName, TokenCounter>();

export function tokenCounter(name: TokenizerName = 'cl100k_base'): TokenCounter {
  let counter = counters.get(name);
  if (!counter) {
    counter = buildCounter(name);
    counters.set(name, counter);
  }
  return counter;
}

function buildCounter(name: TokenizerName): TokenCounter {
  const { encoder, split: pattern } = encoding(name);
  let memo = new Map<string, number>();
  const piece = (p: string): number => {
    let n = memo.get(p);
    if (n === undefined) {
      n = encoder.countTokens(p);
      if (memo.size >= MEMO_MAX) memo = new Map();
      memo.set(p, n);
    }
    return n;
  };
  return {
    name,
    count(text: string): number {
      let n = 0;
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m; m = pattern.exec(text)) n += piece(m[0]);
      return n;
    },
    measure(text: string): Measure {
      const out: Measure = { tokens: 0, pieces: 0, head: 0, headTokens: 0, tail: 0, tailTokens: 0 };
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
        const n = piece(m[0]);
        out.tokens += n;
        if (out.pieces++ === 0) [out.head, out.headTokens] = [m[0].length, n];
        [out.tail, out.tailTokens] = [m[0].length, n];
      }
      return out;
    },
  };
}
