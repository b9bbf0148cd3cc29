/**
 * Database triggers as App Services defines them (`triggers/<name>.json`, `type: "DATABASE"`): which change
 * events fire which function, and the change event the function receives. Pure: no I/O, no transport.
 */
import { type AppConfig, type Trigger } from '@tessera/app-config';
import { type DocumentChanged } from '@tessera/contracts';
import { buildProjector, compileDocumentFilter, type Document, type Matcher, normalize, type Projector } from '@tessera/datastore';
import { toTriggerEvent } from '../change-events/change-event-codec';
import { triggerFunctionName } from './trigger-function';

export interface DatabaseTrigger {
  name: string;
  id?: string;
  functionName: string;
  /** `config.service_name`: the linked data-source service watched. */
  service: string;
  database?: string;
  /** Absent: every collection of the database. */
  collection?: string;
  /** Lower-case change kinds (`insert`, `update`, `replace`, `delete`). */
  operationTypes: ReadonlySet<string>;
  match?: Matcher;
  project?: Projector;
  /** Updates carry `fullDocument` (inserts and replaces always do). */
  fullDocument: boolean;
  fullDocumentBeforeChange: boolean;
  /** `disabled: true`: it does not fire; its changes wait for it to be enabled, unless it skips catch-up events. */
  disabled: boolean;
  /** `config.unordered` false (App Services' default): one change at a time, in order, across replicas. */
  ordered: boolean;
  /** `config.skip_catchup_events`: enabling or resuming it starts from now. */
  skipCatchup: boolean;
  /** `config.tolerate_resume_errors`: a resume whose position is lost starts from now instead of failing. */
  tolerateResumeErrors: boolean;
}

const cache = new WeakMap<AppConfig, DatabaseTrigger[]>();

/** The database triggers of a deployed app, disabled ones too (parsed once per deployment). */
export function databaseTriggers(config: AppConfig): DatabaseTrigger[] {
  let triggers = cache.get(config);
  if (!triggers) {
    triggers = config.triggers.filter((trigger) => trigger.type === 'DATABASE').flatMap((trigger) => parse(trigger));
    cache.set(config, triggers);
  }
  return triggers;
}

function parse(trigger: Trigger): DatabaseTrigger[] {
  const config = (trigger.config ?? {}) as Record<string, unknown>;
  const functionName = triggerFunctionName(trigger);
  const service = config['service_name'];
  if (typeof functionName !== 'string' || typeof service !== 'string') return [];
  const kinds = Array.isArray(config['operation_types']) ? config['operation_types'].filter((kind): kind is string => typeof kind === 'string').map((kind) => kind.toLowerCase()) : ['insert', 'update', 'replace', 'delete'];
  const match = isDocument(config['match']) && Object.keys(config['match']).length > 0 ? compileDocumentFilter(normalize(config['match']) as Document) : undefined;
  const project = isDocument(config['project']) ? buildProjector(normalize(config['project']) as Document) : undefined;
  return [
    {
      name: trigger.name,
      ...(trigger.id ? { id: trigger.id } : {}),
      functionName,
      service,
      ...(typeof config['database'] === 'string' && config['database'] ? { database: config['database'] } : {}),
      ...(typeof config['collection'] === 'string' && config['collection'] ? { collection: config['collection'] } : {}),
      operationTypes: new Set(kinds),
      ...(match ? { match } : {}),
      ...(project ? { project } : {}),
      fullDocument: config['full_document'] === true,
      fullDocumentBeforeChange: config['full_document_before_change'] === true,
      disabled: trigger.disabled === true,
      ordered: config['unordered'] !== true,
      skipCatchup: config['skip_catchup_events'] === true,
      tolerateResumeErrors: config['tolerate_resume_errors'] === true,
    },
  ];
}

function isDocument(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when the change is of the source, namespace and operation type the trigger asked for (no decoding). */
export function watches(trigger: DatabaseTrigger, change: Pick<DocumentChanged, 'service' | 'db' | 'coll' | 'operationType'>): boolean {
  if (trigger.service !== change.service) return false;
  if (trigger.database !== undefined && trigger.database !== change.db) return false;
  if (trigger.collection !== undefined && trigger.collection !== change.coll) return false;
  return trigger.operationTypes.has(change.operationType);
}

/** The change event `trigger`'s function gets for `change`, or undefined when the trigger does not fire. */
export function triggerEventFor(trigger: DatabaseTrigger, change: DocumentChanged): Document | undefined {
  if (!watches(trigger, change)) return undefined;
  let event = toTriggerEvent(change);
  if (change.operationType === 'update' && !trigger.fullDocument) delete event['fullDocument'];
  if (!trigger.fullDocumentBeforeChange) delete event['fullDocumentBeforeChange'];
  if (trigger.match && !trigger.match(normalize(event) as Document)) return undefined;
  if (trigger.project) event = trigger.project(event);
  return event;
}
