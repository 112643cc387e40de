export { parseTemplate } from './parse';
export type { FrontmatterBlock, ParsedTemplate, TemplateField } from './types';
export { fillTemplate, modelFields, needsModel, renderSystemPrompt, renderWithoutModel } from './fill';
export {
  buildExtractionPrompt,
  DEFAULT_SYSTEM_PROMPT,
  fieldDescriptions,
  languageName,
  type ExtractionPrompt,
  type ExtractionPromptInput,
} from './prompt';
export { FIELD_NAME_RE, formatValue, TEXT_PLACEHOLDER, type Placeholder, type TemplateSection } from './scan';
export {
  isValidTemplateName,
  listTemplates,
  loadTemplate,
  TEMPLATE_NAME_RE,
  TEMPLATES_DIR,
  type LoadedTemplate,
  type TemplateSummary,
} from './catalog';
