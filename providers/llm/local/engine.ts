import path from 'node:path';
import {
  getLlama,
  LlamaChat,
  LlamaLogLevel,
  type ChatHistoryItem,
  type Llama,
  type LlamaContext,
  type LlamaGrammar,
  type LlamaModel,
} from 'node-llama-cpp';
import { RequestQueue } from './queue';

/** What one completion asks for (already validated by the server). */
export interface LocalCompletionRequest {
  messages: { role: 'system' | 'user' | 'assistant'; content: string }[];
  maxTokens?: number;
  temperature?: number;
  /** `json_object`: any JSON object; `json_schema`: an object of that schema (the runtime's grammar enforces both). */
  format?: { type: 'json_object' } | { type: 'json_schema'; schema: Record<string, unknown> };
  signal?: AbortSignal;
}

export interface LocalCompletion {
  content: string;
  promptTokens: number;
  completionTokens: number;
  finishReason: 'stop' | 'length';
}

export interface LocalEngineOptions {
  modelPath: string;
  /** Tokens per sequence: prompt and answer together (4096). */
  contextSize: number;
  /** Completions generated at once (one sequence each). */
  slots: number;
  /** Requests waiting for a slot beyond those generating; more are refused (`QueueFullError`). */
  queueSize: number;
  /** CPU threads; see `defaultThreads`. */
  threads: number;
}

/** A request whose prompt (with the answer it asks room for) does not fit the context: the client's fault. */
export class ContextOverflowError extends Error {
  constructor(
    readonly promptTokens: number,
    readonly contextSize: number,
    readonly wanted: number,
  ) {
    super(
      `This model's maximum context length is ${contextSize} tokens. However, you requested ${promptTokens + wanted} tokens ` +
        `(${promptTokens} in the messages, ${wanted} in the completion). Please reduce the length of the messages or completion.`,
    );
    this.name = 'ContextOverflowError';
  }
}

/** A response_format schema the grammar compiler cannot use. */
export class SchemaError extends Error {
  name = 'SchemaError';
}

/**
 * llama.cpp threads by default: half the cores, at least one. The model shares the machine with the worker, OCR and
 * speech; measured on 2 cores under load (bench/README.md), two threads spinning against other processes generated
 * six times slower than one.
 */
export const defaultThreads = (cores: number): number => Math.max(1, Math.floor(cores / 2));

/** The id the server answers to: the model file's name without `.gguf`. */
export const modelIdOf = (modelPath: string): string => path.basename(modelPath).replace(/\.gguf$/i, '');

/**
 * The local model: loaded once (CPU only, the prebuilt binary, never a build), one context with a sequence per
 * slot, a bounded queue in front. JSON answers are constrained by the runtime's grammar, so they always parse.
 */
export class LocalLlmEngine {
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private readonly chats: LlamaChat[];
  private readonly free: LlamaChat[];
  readonly queue: RequestQueue;

  private constructor(
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    readonly options: LocalEngineOptions,
  ) {
    this.chats = Array.from({ length: options.slots }, () => new LlamaChat({ contextSequence: context.getSequence() }));
    this.free = [...this.chats];
    this.queue = new RequestQueue(options.slots, options.queueSize);
  }

  static async load(options: LocalEngineOptions): Promise<LocalLlmEngine> {
    const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, progressLogs: false });
    const model = await llama.loadModel({ modelPath: options.modelPath });
    const context = await model.createContext({
      contextSize: options.contextSize,
      sequences: options.slots,
      threads: options.threads,
    });
    return new LocalLlmEngine(llama, model, context, options);
  }

  get id(): string {
    return modelIdOf(this.options.modelPath);
  }

  /** Tokens per sequence as created (llama.cpp may round up). */
  get contextSize(): number {
    return this.context.contextSize;
  }

  /**
   * One chat completion: waits for a slot (or throws `QueueFullError` at once), checks the prompt fits the context
   * (`ContextOverflowError`), then generates. An abort through `signal` leaves the queue or stops the generation.
   */
  async complete(req: LocalCompletionRequest): Promise<LocalCompletion> {
    const grammar = req.format ? await this.grammarFor(req.format) : undefined;
    return this.queue.run(req.signal, async () => {
      const chat = this.free.pop()!;
      try {
        return await this.generate(chat, req, grammar);
      } finally {
        this.free.push(chat);
      }
    });
  }

  private async generate(
    chat: LlamaChat,
    req: LocalCompletionRequest,
    grammar: LlamaGrammar | undefined,
  ): Promise<LocalCompletion> {
    const history = toHistory(req.messages);
    const promptTokens = chat.chatWrapper
      .generateContextState({ chatHistory: history })
      .contextText.tokenize(this.model.tokenizer).length;
    const room = this.contextSize - promptTokens;
    if (room < (req.maxTokens ?? 1)) throw new ContextOverflowError(promptTokens, this.contextSize, req.maxTokens ?? 1);
    const maxTokens = Math.min(req.maxTokens ?? room, room);
    const meter = chat.sequence.tokenMeter.getState();
    const r = await chat.generateResponse(history, {
      maxTokens,
      temperature: req.temperature ?? 0,
      grammar,
      signal: req.signal,
    });
    const used = chat.sequence.tokenMeter.diff(meter);
    return {
      content: r.response,
      promptTokens,
      completionTokens: used.usedOutputTokens || this.model.tokenize(r.response).length,
      finishReason: r.metadata.stopReason === 'maxTokens' ? 'length' : 'stop',
    };
  }

  private grammarFor(format: NonNullable<LocalCompletionRequest['format']>): Promise<LlamaGrammar> {
    const key = format.type === 'json_schema' ? JSON.stringify(format.schema) : 'json';
    let g = this.grammars.get(key);
    if (!g) {
      g =
        format.type === 'json_schema'
          ? this.llama.createGrammarForJsonSchema(format.schema as never).catch((err: unknown) => {
              this.grammars.delete(key);
              throw new SchemaError(
                `response_format.json_schema.schema is not usable: ${err instanceof Error ? err.message : String(err)}`,
              );
            })
          : this.llama.getGrammarFor('json');
      // A small cache: templates repeat their schema, but a client could send endless distinct ones.
      if (this.grammars.size >= 64) this.grammars.delete(this.grammars.keys().next().value!);
      this.grammars.set(key, g);
    }
    return g;
  }

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }
}

/** OpenAI messages as node-llama-cpp chat history, ending with the model's (empty) turn to generate. */
function toHistory(messages: LocalCompletionRequest['messages']): ChatHistoryItem[] {
  const out: ChatHistoryItem[] = messages.map((m) =>
    m.role === 'system'
      ? { type: 'system', text: m.content }
      : m.role === 'user'
        ? { type: 'user', text: m.content }
        : { type: 'model', response: [m.content] },
  );
  out.push({ type: 'model', response: [] });
  return out;
}
