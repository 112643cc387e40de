/** The variables that choose a language model: any of them set means the test asked for one. */
const LLM_CHOICE = ['LLM_PROVIDER', 'LLM_BASE_URL', 'OPENAI_BASE_URL', 'LLM_API_KEY', 'OPENAI_API_KEY'];

/**
 * Test configurations have no language model unless the test asks for one: without any LLM variable the service
 * would use the local model server (`LLM_PROVIDER=local` implied), which only test/slow/local-llm.test.ts starts.
 * So `LLM_PROVIDER=none` is added when none of the choosing variables is set.
 */
export function noLlmUnlessAsked<T extends Record<string, string | undefined>>(env: T): T {
  return LLM_CHOICE.some((k) => (env[k] ?? '').trim() !== '') ? env : { ...env, LLM_PROVIDER: 'none' };
}
