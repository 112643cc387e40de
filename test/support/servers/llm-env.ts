import { startLlmServer, type LlmServer, type LlmRequest } from './llm-server';
import { useStack, type Stack } from './stack';

/** The API key the LLM test server insists on (it answers 401 to anything else). Must never reach a client. */
export const LLM_KEY = 'sk-test-transformer-0123456789-secret';
export const LLM_MODEL = 'transformer-test-model';

/** The LLM variables for a stack or a service process that talks to `llm`; `extra` overrides them. */
export function llmEnv(llm: LlmServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    LLM_BASE_URL: llm.url,
    LLM_MODEL,
    LLM_API_KEY: LLM_KEY,
    LLM_TIMEOUT_MS: '10000',
    LLM_MAX_RETRIES: '1',
    LLM_PRICES: JSON.stringify({ [LLM_MODEL]: { input: 0.5, output: 1.5 } }),
    ...extra,
  };
}

/** The text of a chat request's message with `role` (the first one). */
export function message(req: LlmRequest | undefined, role: 'system' | 'user'): string {
  const m = (req?.json?.messages ?? []).find((x: { role: string }) => x.role === role);
  return typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '');
}

/**
 * Mocha hooks for a suite that runs against a stack talking to an LLM test server: both started before the suite,
 * stopped after it, and the server's script and request log reset before each test. `assign` receives them.
 */
export function useLlmStack(assign: (stack: Stack, llm: LlmServer) => void, extra: Record<string, string> = {}): void {
  let llm: LlmServer | undefined;
  before(async () => {
    llm = await startLlmServer({ apiKey: LLM_KEY });
  });
  useStack(
    (stack) => assign(stack, llm!),
    () => llmEnv(llm!, extra),
  );
  after(async () => {
    await llm?.close();
  });
  beforeEach(() => llm?.reset());
}
