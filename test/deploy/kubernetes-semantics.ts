import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseListenAddress } from '../../src/config/env.ts';
import { SHUTDOWN_GRACE_MS } from '../../src/transports/http/server/shutdown.ts';
import type { Manifest } from './kubernetes-schema.ts';

/**
 * The checks a schema cannot make: that the objects of deploy/kubernetes fit each other and the
 * service (probe ports are the configured admin port, Services and policies select the pods, the admin
 * port stays private). Each returns problems as text; an empty list means consistent.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function find(docs: readonly Manifest[], kind: string, name?: string): Json[] {
  return docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name)) as Json[];
}

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean =>
  selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The value of a plain `env` entry of the container. */
const envValue = (container: Json, name: string): string | undefined =>
  (container['env'] ?? []).find((e: Json) => e['name'] === name)?.['value'];

/** A port given by name or number, as the container declares it. */
function containerPort(container: Json, port: string | number | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return (container['ports'] ?? []).find((p: Json) => p['name'] === port)?.['containerPort'];
}

export interface ApiPods {
  readonly deployment: Json;
  readonly container: Json;
  readonly podLabels: Record<string, string>;
  readonly httpPort: number;
  readonly adminPort: number;
}

/** The orders Deployment's container and the ports its HTTP_ADDR and ADMIN_ADDR name. */
export function apiPods(docs: readonly Manifest[]): ApiPods {
  const [deployment] = find(docs, 'Deployment', 'orders');
  if (deployment === undefined) throw new Error('no Deployment orders');
  const container = deployment['spec']['template']['spec']['containers'][0];
  const httpAddr = envValue(container, 'HTTP_ADDR');
  const adminAddr = envValue(container, 'ADMIN_ADDR');
  if (httpAddr === undefined || adminAddr === undefined) throw new Error('the container does not set HTTP_ADDR and ADMIN_ADDR explicitly');
  return {
    deployment,
    container,
    podLabels: deployment['spec']['template']['metadata']['labels'],
    httpPort: parseListenAddress('HTTP_ADDR', httpAddr).port,
    adminPort: parseListenAddress('ADMIN_ADDR', adminAddr).port,
  };
}

export function deploymentProblems(docs: readonly Manifest[], root: string): string[] {
  const problems: string[] = [];
  const { deployment, container, podLabels, httpPort, adminPort } = apiPods(docs);
  const pod = deployment['spec']['template']['spec'];
  if (!matches(deployment['spec']['selector']['matchLabels'], podLabels)) problems.push('Deployment selector does not select its own pods');
  if (containerPort(container, 'http') !== httpPort) problems.push(`container port http is not HTTP_ADDR's port ${httpPort}`);
  if (containerPort(container, 'admin') !== adminPort) problems.push(`container port admin is not ADMIN_ADDR's port ${adminPort}`);
  if (parseListenAddress('ADMIN_ADDR', envValue(container, 'ADMIN_ADDR')!).host !== undefined)
    problems.push('ADMIN_ADDR names a host: the kubelet probes the pod IP, so it must listen on every interface');
  const entry = container['args']?.[0];
  if (entry !== 'bin/orders-grpc.ts' || !existsSync(join(root, entry)))
    problems.push(`container args ${JSON.stringify(container['args'])} do not start bin/orders-grpc.ts`);

  const probes: Record<string, string> = { readinessProbe: '/readyz', livenessProbe: '/livez', startupProbe: '/livez' };
  for (const [probe, path] of Object.entries(probes)) {
    const get = container[probe]?.['httpGet'];
    if (get === undefined) problems.push(`${probe} is not an HTTP GET`);
    else {
      if (get['path'] !== path) problems.push(`${probe} asks ${get['path']}, expected ${path}`);
      if (containerPort(container, get['port']) !== adminPort)
        problems.push(`${probe} port ${get['port']} is not the admin port ${adminPort}`);
    }
  }

  const secretEnv = (name: string): Json | undefined =>
    (container['env'] ?? []).find((e: Json) => e['name'] === name)?.['valueFrom']?.['secretKeyRef'];
  for (const name of ['JWT_SECRET', 'POSTGRES_DSN']) {
    const ref = secretEnv(name);
    if (ref === undefined) problems.push(`${name} does not come from a Secret`);
    else if (find(docs, 'Secret', ref['name'])[0]?.['stringData']?.[ref['key']] === undefined)
      problems.push(`${name} refers to ${ref['name']}/${ref['key']}, which no Secret holds`);
    if (envValue(container, name) !== undefined) problems.push(`${name} has a literal value in the Deployment`);
  }
  for (const from of container['envFrom'] ?? []) {
    const name = from['configMapRef']?.['name'];
    if (name !== undefined && find(docs, 'ConfigMap', name).length === 0)
      problems.push(`envFrom names ConfigMap ${name}, which is not among the manifests`);
  }

  const sleep = container['lifecycle']?.['preStop']?.['sleep']?.['seconds'];
  if (typeof sleep !== 'number' || sleep < 5)
    problems.push('no preStop sleep of at least 5 s to let endpoints drop the pod before SIGTERM');
  else if (pod['terminationGracePeriodSeconds'] < sleep + SHUTDOWN_GRACE_MS / 1000 + 5) {
    problems.push(
      `terminationGracePeriodSeconds ${pod['terminationGracePeriodSeconds']} does not cover preStop ${sleep} s + shutdown grace ${SHUTDOWN_GRACE_MS / 1000} s + 5 s to close backends`,
    );
  }

  const pods = [pod, ...find(docs, 'Job').map((j) => j['spec']['template']['spec'])];
  for (const spec of pods) {
    if (spec['securityContext']?.['runAsNonRoot'] !== true) problems.push('a pod does not set runAsNonRoot');
    for (const c of spec['containers']) {
      const sc = c['securityContext'] ?? {};
      if (sc['readOnlyRootFilesystem'] !== true || sc['allowPrivilegeEscalation'] !== false)
        problems.push(`container ${c['name']}: root filesystem writable or privilege escalation allowed`);
      const { requests, limits } = c['resources'] ?? {};
      if (requests?.['cpu'] === undefined || requests?.['memory'] === undefined || limits?.['memory'] === undefined)
        problems.push(`container ${c['name']}: no CPU and memory requests and memory limit`);
      else if (mebibytes(requests['memory']) > mebibytes(limits['memory']))
        problems.push(`container ${c['name']}: memory request above the limit`);
    }
  }
  return problems;
}

export function jobProblems(docs: readonly Manifest[], root: string): string[] {
  const problems: string[] = [];
  const [job] = find(docs, 'Job', 'orders-migrate');
  if (job === undefined) return ['no Job orders-migrate'];
  const args = job['spec']['template']['spec']['containers'][0]['args'];
  if (JSON.stringify(args) !== '["bin/orders-admin.ts","migrate"]' || !existsSync(join(root, 'bin/orders-admin.ts')))
    problems.push(`migration Job runs ${JSON.stringify(args)}, not orders-admin migrate`);
  // The Job's pod must not count as a serving pod (Services, PodDisruptionBudget).
  if (matches(apiPods(docs).deployment['spec']['selector']['matchLabels'], job['spec']['template']['metadata']['labels']))
    problems.push("the migration pod carries the serving pods' labels");
  return problems;
}

export function serviceProblems(docs: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const { container, podLabels, httpPort, adminPort } = apiPods(docs);
  const [open] = find(docs, 'Service', 'orders');
  const [admin] = find(docs, 'Service', 'orders-admin');
  if (open === undefined || admin === undefined) return ['Services orders and orders-admin are both needed'];
  for (const service of [open, admin]) {
    if (!matches(service['spec']['selector'], podLabels))
      problems.push(`Service ${service['metadata']['name']} does not select the orders pods`);
  }
  const targets = (service: Json): number[] =>
    service['spec']['ports'].map((p: Json) => containerPort(container, p['targetPort'] ?? p['port']));
  if (targets(open).includes(adminPort)) problems.push('the public Service exposes the admin port');
  if (!targets(open).includes(httpPort)) problems.push('the public Service does not reach the public port');
  if (JSON.stringify(targets(admin)) !== JSON.stringify([adminPort])) problems.push('the admin Service reaches more than the admin port');
  if ((admin['spec']['type'] ?? 'ClusterIP') !== 'ClusterIP')
    problems.push(`the admin Service is of type ${admin['spec']['type']}, reachable from outside the cluster`);
  return problems;
}

/** Spec 4.2: the admin port admits in-cluster pods only, the public port anyone. */
export function networkPolicyProblems(docs: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const { container, podLabels, httpPort, adminPort } = apiPods(docs);
  const policies = find(docs, 'NetworkPolicy').filter((p) => matches(p['spec']['podSelector']['matchLabels'], podLabels));
  if (policies.length === 0) return ['no NetworkPolicy selects the orders pods'];
  const rules = policies.flatMap((p) =>
    (p['spec']['policyTypes'] ?? ['Ingress']).includes('Ingress') ? (p['spec']['ingress'] ?? []) : [],
  );
  if (!policies.some((p) => (p['spec']['policyTypes'] ?? ['Ingress']).includes('Ingress'))) problems.push('no policy restricts ingress');
  // A rule without ports admits every port; without `from` it admits every source.
  const admits = (rule: Json, port: number): boolean =>
    rule['ports'] === undefined || rule['ports'].some((p: Json) => containerPort(container, p['port']) === port);
  const anySource = (rule: Json): boolean =>
    rule['from'] === undefined || rule['from'].length === 0 || rule['from'].some((f: Json) => f['ipBlock'] !== undefined);
  if (rules.some((r: Json) => admits(r, adminPort) && anySource(r))) problems.push('a rule admits the admin port from outside the cluster');
  if (!rules.some((r: Json) => admits(r, adminPort) && !anySource(r)))
    problems.push('no rule admits the admin port from inside the cluster (probes and scrapes)');
  if (!rules.some((r: Json) => admits(r, httpPort))) problems.push('no rule admits the public port');
  return problems;
}

export function scalingProblems(docs: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const { deployment, podLabels } = apiPods(docs);
  const [pdb] = find(docs, 'PodDisruptionBudget');
  if (pdb === undefined || !matches(pdb['spec']['selector']['matchLabels'], podLabels))
    problems.push('no PodDisruptionBudget selects the orders pods');
  const [hpa] = find(docs, 'HorizontalPodAutoscaler');
  const target = hpa?.['spec']['scaleTargetRef'];
  if (target?.['kind'] !== 'Deployment' || target?.['name'] !== deployment['metadata']['name'])
    problems.push('the HorizontalPodAutoscaler does not scale the orders Deployment');
  else {
    if (hpa!['spec']['minReplicas'] < 2) problems.push('fewer than 2 replicas: a drain or a rollout leaves no pod serving');
    if (deployment['spec']['replicas'] !== undefined)
      problems.push('the Deployment sets replicas, which every apply would reset under the autoscaler');
  }
  return problems;
}

export function allProblems(docs: readonly Manifest[], root: string): string[] {
  return [
    ...deploymentProblems(docs, root),
    ...jobProblems(docs, root),
    ...serviceProblems(docs),
    ...networkPolicyProblems(docs),
    ...scalingProblems(docs),
  ];
}

/** Kubernetes quantities in Mi/Gi (the forms these manifests use). */
function mebibytes(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`memory quantity ${quantity}: use Mi or Gi`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
}
