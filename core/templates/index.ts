export { parseTemplate } from './parse';
export type { ParsedTemplate } from './types';
export { fillTemplate, modelFields, needsModel, renderSystemPrompt, renderWithoutModel } from './fill';
export { buildExtractionPrompt, DEFAULT_SYSTEM_PROMPT, fieldDescriptions, languageName } from './prompt';
export { listTemplates, loadTemplate, TEMPLATES_DIR } from './catalog';
