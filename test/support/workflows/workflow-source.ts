import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Facts read from the workflow code itself (parsed with the TypeScript compiler, never run), so replay.test.ts asks a
 * recorded history of every pipeline, patch and workflow there is, and a new one without a history fails it.
 */

const parse = (file: string) => ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  node.forEachChild((c) => walk(c, visit));
}

const where = (sf: ts.SourceFile, n: ts.Node) =>
  `${sf.fileName}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;

function stringValue(n: ts.Node | undefined): string | undefined {
  return n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : undefined;
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? tsFiles(p) : d.name.endsWith('.ts') ? [p] : [];
  });
}

interface PatchSite {
  id: string;
  call: 'patched' | 'deprecatePatch';
  /** `file:line` of the call. */
  at: string;
}

/**
 * Every `patched(…)` and `deprecatePatch(…)` call under `dir`, with its patch id. The id may be a string literal, a
 * constant of the same file (`const X = 'id'`) or one exported by a file under `dir`, or a property read
 * (`added.patch`: every `patch: 'id'` of the file
 * counts). Any other argument throws, naming the call, so no patch goes unseen.
 */
export function patchSites(dir: string): PatchSite[] {
  const sites: PatchSite[] = [];
  // Exported string constants of any file under `dir` (the ids of workflows/patches.ts, imported where they are used).
  const exported = new Map<string, string>();
  for (const file of tsFiles(dir)) {
    walk(parse(file), (n) => {
      if (!ts.isVariableStatement(n) || !n.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) return;
      for (const d of n.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && stringValue(d.initializer) !== undefined)
          exported.set(d.name.text, stringValue(d.initializer)!);
      }
    });
  }
  for (const file of tsFiles(dir)) {
    const sf = parse(file);
    const consts = new Map<string, string>(exported);
    const props = new Map<string, string[]>();
    walk(sf, (n) => {
      if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && stringValue(n.initializer) !== undefined)
        consts.set(n.name.text, stringValue(n.initializer)!);
      if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && stringValue(n.initializer) !== undefined) {
        props.set(n.name.text, [...(props.get(n.name.text) ?? []), stringValue(n.initializer)!]);
      }
    });
    walk(sf, (n) => {
      if (!ts.isCallExpression(n) || !ts.isIdentifier(n.expression)) return;
      const call = n.expression.text;
      if (call !== 'patched' && call !== 'deprecatePatch') return;
      const arg = n.arguments[0];
      const ids =
        stringValue(arg) !== undefined
          ? [stringValue(arg)!]
          : arg && ts.isIdentifier(arg) && consts.has(arg.text)
            ? [consts.get(arg.text)!]
            : arg && ts.isPropertyAccessExpression(arg) && props.has(arg.name.text)
              ? props.get(arg.name.text)!
              : undefined;
      if (!ids) throw new Error(`cannot tell the patch id of ${call}(${arg?.getText(sf) ?? ''}) at ${where(sf, n)}`);
      for (const id of ids) sites.push({ id, call, at: where(sf, n) });
    });
  }
  return sites;
}

/**
 * The job types the pipeline table dispatches to: the keys of every object literal assigned to a variable whose type
 * names `Pipeline` or `PipelineTable` in `file` (`PIPELINES`). Throws when there is none.
 */
export function pipelineJobTypes(file: string): string[] {
  const sf = parse(file);
  const types: string[] = [];
  walk(sf, (n) => {
    if (!ts.isVariableDeclaration(n) || !n.type || !/\bPipeline(Table)?\b/.test(n.type.getText(sf))) return;
    if (!n.initializer || !ts.isObjectLiteralExpression(n.initializer))
      throw new Error(`the pipeline table ${n.name.getText(sf)} at ${where(sf, n)} is not an object literal`);
    for (const p of n.initializer.properties) {
      if (!p.name || !(ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)))
        throw new Error(`a pipeline key at ${where(sf, p)} is not a plain name`);
      types.push(p.name.text);
    }
  });
  if (!types.length) throw new Error(`no pipeline table found in ${file}`);
  return types;
}

/** The workflow functions a worker registers: the names `workflows/index.ts` exports. */
export function exportedWorkflows(indexFile: string): string[] {
  const sf = parse(indexFile);
  const names: string[] = [];
  walk(sf, (n) => {
    if (ts.isExportSpecifier(n)) names.push(n.name.text);
    if (ts.isFunctionDeclaration(n) && n.name && n.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword))
      names.push(n.name.text);
  });
  return names;
}
