/**
 * Validates rendered Kubernetes objects against the Kubernetes OpenAPI schemas shipped by
 * `kubernetes-models` (ESM only, so loaded with dynamic imports). Test-only code.
 *
 * The generated schema validators accept unknown fields, which a real API server rejects under
 * kubectl's default strict field validation. `findUnknownFields` closes that gap without a second copy
 * of the schemas: it runs the same validator over a proxy of the object and reports every field the
 * validator never looked at, since a validator reads exactly the fields its schema declares.
 */

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

interface ModelClass {
  new (data: KubernetesObject): { validate(): void };
  prototype: { validate(this: unknown): void };
}

type ModelModule = Record<string, unknown>;

/** The API groups Tessera's manifests use. An object of any other apiVersion fails validation. */
const modelModules: Record<string, () => Promise<ModelModule>> = {
  v1: () => import('kubernetes-models/v1'),
  'apps/v1': () => import('kubernetes-models/apps/v1'),
  'batch/v1': () => import('kubernetes-models/batch/v1'),
  'autoscaling/v2': () => import('kubernetes-models/autoscaling/v2'),
  'networking.k8s.io/v1': () => import('kubernetes-models/networking.k8s.io/v1'),
  'policy/v1': () => import('kubernetes-models/policy/v1'),
};

const loaded = new Map<string, Promise<ModelModule>>();

/** The model class for an object's apiVersion and kind; throws for an unknown one. */
export async function modelFor(object: Pick<KubernetesObject, 'apiVersion' | 'kind'>): Promise<ModelClass> {
  const load = modelModules[object.apiVersion];
  if (!load) throw new Error(`unknown apiVersion "${object.apiVersion}" (kind ${object.kind})`);
  let module = loaded.get(object.apiVersion);
  if (!module) {
    module = load();
    loaded.set(object.apiVersion, module);
  }
  const model = (await module)[object.kind];
  if (typeof model !== 'function' || typeof (model as Partial<ModelClass>).prototype?.validate !== 'function') {
    throw new Error(`unknown kind "${object.kind}" in apiVersion "${object.apiVersion}"`);
  }
  return model as ModelClass;
}

/** Schema errors of one object, or an empty list. Unknown fields count as errors. */
export async function schemaErrors(object: KubernetesObject): Promise<string[]> {
  const Model = await modelFor(object);
  try {
    new Model(object).validate();
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
  return findUnknownFields(Model, object).map((path) => `unknown field ${path}`);
}

/** JSON-pointer paths of the fields in `object` that the model's schema does not declare. */
export function findUnknownFields(Model: ModelClass, object: KubernetesObject): string[] {
  const fieldsRead = new WeakMap<object, Set<string>>();
  const proxies = new WeakMap<object, object>();
  const observe = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    let proxy = proxies.get(value);
    if (!proxy) {
      const read = new Set<string>();
      fieldsRead.set(value, read);
      proxy = new Proxy(value, {
        get(target, key, receiver) {
          if (typeof key === 'string') read.add(key);
          return observe(Reflect.get(target, key, receiver));
        },
        has(target, key) {
          if (typeof key === 'string') read.add(key);
          return Reflect.has(target, key);
        },
      });
      proxies.set(value, proxy);
    }
    return proxy;
  };
  try {
    Model.prototype.validate.call(observe(object));
  } catch {
    // Type errors are reported by the plain validation in schemaErrors; only the reads matter here.
  }
  const unknown: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, `${path}/${index}`));
      return;
    }
    const read = fieldsRead.get(value) ?? new Set<string>();
    for (const [key, child] of Object.entries(value)) {
      if (read.has(key)) walk(child, `${path}/${key}`);
      else unknown.push(`${path}/${key}`);
    }
  };
  walk(object, '');
  return unknown;
}
