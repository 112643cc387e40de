/**
 * The engines' interfaces, types only, one file per engine kind: what activities and the API's composition root
 * depend on, and what providers/ implement (the worker builds the real ones in worker/engines.ts and
 * worker/create-workers.ts; activity tests inject in-memory ones).
 */
export type * from './external-ocr';
export type * from './llm';
export type * from './media';
export type * from './ocr';
export type * from './office';
export type * from './pdf';
export type * from './speech';
export type * from './storage';
