import { readFileSync } from 'node:fs';
import { join } from 'node:path';
// One module per kind, not the group indexes: those load every kind of their group with its validators,
// ~0.6 s of CPU for these six groups against ~0.2 s for the eight kinds used.
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { parseAllDocuments } from 'yaml';
import { typeCheckSource } from '../support/type-check.ts';

/**
 * Kubernetes manifest checks against the OpenAPI schemas of one release, as shipped by the
 * `kubernetes-models` package (generated from Kubernetes 1.34's OpenAPI document):
 * - schemaProblems: the package's compiled JSON-schema validators (types, required fields, formats,
 *   enums). The Kubernetes schemas allow unknown properties, so these alone accept a misspelt field.
 * - unknownFieldProblems: the package's TypeScript declarations, generated from the same schemas, with
 *   the compiler's excess-property check: an unknown field anywhere is reported, as the API server's
 *   strict field validation would.
 */

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
} & Record<string, unknown>;

/**
 * The model class of each kind: `new Model(doc).validate()` throws on a schema violation. Its TypeScript
 * declaration is interface `I<kind>` of module `kubernetes-models/<apiVersion>/<kind>`.
 */
const KINDS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

const label = (doc: Manifest): string => `${doc.kind}/${doc.metadata?.name}`;

/** Every document of a multi-document YAML text; a YAML syntax error throws. */
export function parseManifests(text: string, source: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as Manifest | null;
    })
    .filter((doc): doc is Manifest => doc !== null);
}

export function readManifests(dir: string, files: readonly string[]): Manifest[] {
  return files.flatMap((file) => parseManifests(readFileSync(join(dir, file), 'utf8'), file));
}

export function schemaProblems(doc: Manifest): string[] {
  const Model = KINDS[`${doc.apiVersion}/${doc.kind}`];
  if (Model === undefined) return [`${label(doc)}: ${doc.apiVersion} ${doc.kind} is not a kind this check knows`];
  try {
    new Model(structuredClone(doc) as never).validate();
    return [];
  } catch (error) {
    return [`${label(doc)}: ${(error as Error).message}`];
  }
}

/** Type-checks each manifest as a literal of its kind's declared interface; one problem per diagnostic. */
export function unknownFieldProblems(docs: readonly Manifest[], root: string): string[] {
  const known = docs.map((doc) => KINDS[`${doc.apiVersion}/${doc.kind}`] !== undefined);
  const problems = docs.flatMap((doc, i) =>
    known[i] ? [] : [`${label(doc)}: ${doc.apiVersion} ${doc.kind} is not a kind this check knows`],
  );
  const imports = [
    ...new Set(
      docs.filter((_, i) => known[i]).map((doc) => `import type { I${doc.kind} } from 'kubernetes-models/${doc.apiVersion}/${doc.kind}';`),
    ),
  ];
  const lines = docs.map((doc, i) => (known[i] ? `export const m${i}: I${doc.kind} = ${JSON.stringify(doc)};` : ''));
  const fileName = join(root, 'test/deploy/__kubernetes-manifests__.ts');
  const source = [...imports, ...lines].join('\n');
  for (const { line, message } of typeCheckSource(fileName, source)) {
    const doc = docs[line - imports.length];
    problems.push(`${doc ? label(doc) : 'manifests'}: ${message}`);
  }
  return problems;
}
