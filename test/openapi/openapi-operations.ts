import { parse } from 'yaml';
import { OPENAPI_YAML } from '../../src/gen/openapi-document.ts';

/** One operation as the embedded contract declares it. */
export interface OpenapiOperation {
  /** Upper case, as on the wire: 'GET', 'POST'. */
  readonly method: string;
  /** Brace form, as in the contract: '/orders/{id}'. */
  readonly path: string;
  readonly operationId: string;
  /** Every declared response status, success included, ascending. */
  readonly statuses: number[];
  /** False only where the operation opts out of the document's default security (login). */
  readonly authenticated: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface OperationObject {
  operationId?: unknown;
  responses?: Record<string, unknown>;
  security?: unknown[];
}

interface DocumentObject {
  security?: unknown[];
  paths?: Record<string, Partial<Record<(typeof METHODS)[number], OperationObject>>>;
}

/** The embedded contract's operations, read once per process: a parse of it is ~30 ms of CPU, asked for some thirty times a run. */
let embedded: readonly OpenapiOperation[] | undefined;

/**
 * The operations of the embedded contract, read from the document itself rather than restated, so the
 * conformance suite can check that every status a transport returns is declared (spec 4.1 rule 10).
 * Each call returns its own copy.
 */
export function openapiOperations(yamlText: string = OPENAPI_YAML): OpenapiOperation[] {
  if (yamlText !== OPENAPI_YAML) return readOperations(yamlText);
  embedded ??= readOperations(OPENAPI_YAML);
  return embedded.map((op) => ({ ...op, statuses: [...op.statuses] }));
}

function readOperations(yamlText: string): OpenapiOperation[] {
  const doc = parse(yamlText) as DocumentObject;
  const operations: OpenapiOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (op === undefined) continue;
      if (typeof op.operationId !== 'string') {
        throw new Error(`openapi: ${method.toUpperCase()} ${path} has no operationId`);
      }
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        statuses: Object.keys(op.responses ?? {})
          .map((key) => parseStatus(key, path))
          .sort((x, y) => x - y),
        authenticated: (op.security ?? doc.security ?? []).length > 0,
      });
    }
  }
  return operations;
}

// A range ('4XX') or 'default' would make "is this status declared?" unanswerable, so it is refused.
function parseStatus(key: string, path: string): number {
  if (!/^[1-5]\d\d$/.test(key)) {
    throw new Error(`openapi: ${path} declares response '${key}'; only explicit status codes are allowed`);
  }
  return Number(key);
}
