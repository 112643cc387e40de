import type OpenAI from 'openai';
import type { ClientOptions } from 'openai';

/**
 * The OpenAI SDK (about 10 MB of a process's memory), loaded with the first model or speech call: a process that
 * makes none (an io worker downloading, the API) never loads it. The error classes the retry policy classifies by
 * exist only once it is loaded: an error thrown before can be none of them.
 */
type Sdk = typeof import('openai');
let sdk: Sdk | undefined;
let loading: Promise<Sdk> | undefined;

export function loadOpenAiSdk(): Promise<Sdk> {
  if (sdk) return Promise.resolve(sdk);
  loading ??= import('openai').then((m) => (sdk = m));
  return loading;
}

/** The SDK if a call has loaded it. */
export const loadedOpenAiSdk = (): Sdk | undefined => sdk;

/** A client built on first use with these options (the SDK loaded then), the same one after. */
export function lazyOpenAiClient(options: ClientOptions): () => Promise<OpenAI> {
  let client: Promise<OpenAI> | undefined;
  return () => (client ??= loadOpenAiSdk().then((m) => new m.default(options)));
}
