/** Function tools and `tool_choice` → Gemini function declarations and functionCallingConfig. */
import { DomainError } from '../../../../libs/common/index.js';
import type { GeminiFunctionDeclaration } from '../../../../libs/providers/index.js';
import { invalid, TextErrorCode } from '../text-errors.js';
import { isObject } from './json-readers.js';
import { checkDeclarationCount, checkSchemaLimits } from './schema-limits.js';
import type { TextOperation } from './translated-request.js';

const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;

export function functionDeclarations(tools: unknown, operation: TextOperation): GeminiFunctionDeclaration[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalid('tools', 'must be an array');
  checkDeclarationCount(tools.length);
  const names = new Set<string>();
  return tools.map((tool, i) => {
    const path = `tools.${i}`;
    if (!isObject(tool)) throw invalid(path, 'must be an object');
    if (tool.type !== 'function') {
      throw invalid(`${path}.type`, 'only function tools are accepted here; enable code execution and computer use with providerOptions.vendor.tools');
    }
    const fn = operation === 'chat' ? tool.function : tool;
    const fnPath = operation === 'chat' ? `${path}.function` : path;
    if (!isObject(fn)) throw invalid(fnPath, 'must be an object');
    if (typeof fn.name !== 'string' || !FUNCTION_NAME.test(fn.name)) {
      throw invalid(`${fnPath}.name`, 'must start with a letter or underscore and hold up to 128 of A-Z a-z 0-9 _ . : -');
    }
    if (names.has(fn.name)) throw invalid(`${fnPath}.name`, `duplicate function name ${fn.name}`);
    names.add(fn.name);
    const declaration: GeminiFunctionDeclaration = { name: fn.name };
    if (fn.description !== undefined && fn.description !== null) {
      if (typeof fn.description !== 'string') throw invalid(`${fnPath}.description`, 'must be a string');
      declaration.description = fn.description;
    }
    if (fn.parameters !== undefined && fn.parameters !== null) {
      if (!isObject(fn.parameters)) throw invalid(`${fnPath}.parameters`, 'must be a JSON schema object');
      checkSchemaLimits(fn.parameters, `${fnPath}.parameters`);
      declaration.parametersJsonSchema = fn.parameters;
    }
    return declaration;
  });
}

export function functionCallingConfig(
  choice: unknown,
  declared: GeminiFunctionDeclaration[],
  anyTools: boolean,
): { mode?: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } {
  if (choice === undefined || choice === null) return {};
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') {
    if (!anyTools) throw invalid('tool_choice', '"required" needs at least one tool');
    return { mode: 'ANY' };
  }
  if (isObject(choice) && choice.type === 'function') {
    // Chat's nested {function: {name}} and Responses' flat {name}, accepted in both operations.
    const name = isObject(choice.function) ? choice.function.name : choice.name;
    if (typeof name !== 'string') throw invalid('tool_choice', 'a named tool choice needs the function name');
    if (!declared.some((d) => d.name === name)) {
      throw new DomainError(400, TextErrorCode.ToolChoiceUndeclared, `tool_choice: function ${JSON.stringify(name)} is not declared in tools`);
    }
    return { mode: 'ANY', allowedFunctionNames: [name] };
  }
  throw invalid('tool_choice', 'must be "auto", "none", "required" or a named function object');
}
