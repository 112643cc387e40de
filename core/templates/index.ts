export { parseTemplate } from './parse';
export type { ParsedTemplate } from './types';
export { fillTemplate, modelFields, needsModel, renderSystemPrompt, renderWithoutModel } from './fill';
export {
  buildExtractionPrompt,
  DEFAULT_SYSTEM_PROMPT,
  EMPTY_RULE,
  fieldDescriptions,
  isListField,
  languageName,
} from './prompt';
export { answerFields, saysNothing } from './answer';
export { listTemplates, loadTemplate, TEMPLATES_DIR } from './catalog';
