import { Ajv2020 } from 'ajv/dist/2020.js';

/** A JSON pointer token inside a URI fragment. */
const token = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));

/**
 * Checks real answers against the OpenAPI document the server serves: `check(method, path, status, body)` answers
 * the validation errors of `body` against the schema documented for that operation, status and media type
 * (JSON Schema 2020-12, as OpenAPI 3.1 uses it; `$ref`s resolve inside the document). It throws when the document
 * has no schema there, so an undocumented answer fails too.
 */
export function responseChecker(doc: Record<string, unknown>) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...structuredClone(doc), $id: 'openapi:doc' });
  return (method: string, path: string, status: number, body: unknown, mediaType = 'application/json'): string[] => {
    const ops = (
      doc.paths as Record<
        string,
        Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>
      >
    )[path];
    const schema = ops?.[method.toLowerCase()]?.responses?.[String(status)]?.content?.[mediaType]?.schema;
    if (!schema) throw new Error(`no documented ${mediaType} schema for ${method} ${path} ${status}`);
    const ref = `openapi:doc#/paths/${token(path)}/${method.toLowerCase()}/responses/${status}/content/${token(mediaType)}/schema`;
    const validate = ajv.compile({ $ref: ref });
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
  };
}
