/**
 * Judges a live answer by the OpenAPI document the service serves: its
 * status must be one the document declares for that path and method, its
 * content type one declared for that status, and a JSON body must validate
 * against the declared schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 has
 * it, over the dereferenced document).
 */
import { dereference } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, any>;

// ajv-formats is CommonJS: its default export is the function itself or sits under `default`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

export interface Answer {
  /** The path as the document writes it, with `{name}` parameters. */
  template: string;
  method: string;
  status: number;
  contentType: string | null;
  body: string;
}

export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly compiled = new Map<object, ValidateFunction>();

  private constructor(readonly doc: Json) {
    addFormats(this.ajv);
    // OpenAPI's own formats: int64 and friends are ranges JSON numbers already keep within.
    for (const format of ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password']) this.ajv.addFormat(format, true);
  }

  /** The checker of a served document (a copy: dereferencing changes what it is given). */
  static async of(doc: Json): Promise<ContractChecker> {
    return new ContractChecker(await dereference(structuredClone(doc) as never) as Json);
  }

  /** The problems of one answer; none when it keeps the contract. */
  check(answer: Answer): string[] {
    const where = `${answer.method} ${answer.template} → ${answer.status}`;
    const operation = this.doc.paths?.[answer.template]?.[answer.method.toLowerCase()];
    if (!operation) return [`${answer.method} ${answer.template} is not in the document`];
    const response = operation.responses?.[String(answer.status)] ?? operation.responses?.[`${String(answer.status)[0]}XX`] ?? operation.responses?.default;
    if (!response) return [`${where}: status not declared (declared: ${Object.keys(operation.responses ?? {}).join(', ')})`];
    const content = response.content as Record<string, { schema?: Json }> | undefined;
    if (!content) return answer.body.length ? [`${where}: declares no body, got ${answer.body.length} bytes`] : [];
    const mediaType = (answer.contentType ?? '').split(';')[0].trim().toLowerCase();
    const declared = content[mediaType];
    if (!declared) return [`${where}: content type ${answer.contentType} not declared (declared: ${Object.keys(content).join(', ')})`];
    if (!declared.schema || !/[/+]json$/.test(mediaType)) return [];
    let value: unknown;
    try {
      value = JSON.parse(answer.body);
    } catch {
      return [`${where}: body is not JSON: ${answer.body.slice(0, 200)}`];
    }
    const validate = this.validator(declared.schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).slice(0, 5).map((e) => `${where}: ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}; body ${answer.body.slice(0, 300)}`);
  }

  private validator(schema: Json): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}
