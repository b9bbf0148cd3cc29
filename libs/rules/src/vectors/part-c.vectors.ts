/**
 * PART C of /work/shared/reference/graphql-and-rules.md, transcribed as data (vectors C1-C30; C31-C37
 * are GraphQL generation vectors and belong to the gateway). Each entry cites its vector id and source.
 * Where the vector abbreviates a rule (`{…}`), the filled-in part is marked `// filled:` with the reason.
 * Test-only: excluded from the library build.
 */
import { ObjectId } from 'bson';
import { type RuleUser } from '../expressions/context';
import { type Expression, type FilterConfig, type PartitionPermissionsConfig, type RoleConfig, type RuleSetConfig } from '../roles/rule-config';

export type Doc = Record<string, unknown>;

/** A rule function as the test harness runs it for `%function`: arguments plus the calling user. */
export type VectorFunction = (args: unknown[], user: RuleUser | undefined) => unknown;

export interface RequestExtras {
  values?: Record<string, unknown>;
  environment?: { tag?: string; values?: Record<string, unknown> };
  request?: Record<string, unknown>;
  functions?: Record<string, VectorFunction>;
}

export type RoleCase = { title: string; user: RuleUser } & RequestExtras &
  (
    | { op: 'read'; doc: Doc; expect: { role: string | null; visible: boolean; document?: Doc } }
    | { op: 'insert'; doc: Doc; expect: { role: string | null; allowed: boolean } }
    | { op: 'update'; pre: Doc; post: Doc; expect: { role: string | null; allowed: boolean } }
    | { op: 'delete'; doc: Doc; expect: { role: string | null; allowed: boolean } }
  );

export interface RoleVector {
  id: string;
  source: string;
  collection?: RuleSetConfig;
  defaults?: RuleSetConfig;
  cases: RoleCase[];
}

export interface ExpressionCase extends RequestExtras {
  title: string;
  user?: RuleUser;
  root?: Doc;
  prevRoot?: Doc;
  this?: unknown;
  prev?: unknown;
  args?: unknown;
  expect: boolean;
  /** Arguments each named function must have received. */
  expectCalls?: Record<string, unknown[]>;
}

export interface ExpressionVector {
  id: string;
  source: string;
  expression: Expression;
  cases: ExpressionCase[];
}

export interface SyncCase {
  title: string;
  user: RuleUser;
  /** Expected session role (null: none). */
  role: string | null;
  denied: boolean;
  docs?: { doc: Doc; read: boolean; write: boolean }[];
}

export interface SyncVector {
  id: string;
  source: string;
  rules: RuleSetConfig;
  cases: SyncCase[];
}

export interface FilterVector {
  id: string;
  source: string;
  filters: FilterConfig[];
  user: RuleUser;
  query?: Doc;
  expect: { query: Doc } | { error: 'FilterProjectionConflict' | 'InvalidRule' };
}

export interface PartitionCase extends RequestExtras {
  title: string;
  user: RuleUser;
  partition: unknown;
  read: boolean;
  write: boolean;
}

export interface PartitionVector {
  id: string;
  source: string;
  permissions: PartitionPermissionsConfig;
  cases: PartitionCase[];
}

// ---- Roles, apply_when, document and field permissions (non-Sync): C1-C15 ------------------------------

const phylis = 'phylis.lapin@dundermifflin.com';
const stanley = 'stanley.hudson@dundermifflin.com';
const andy = 'andy.bernard@dundermifflin.com';

const employeeRoles: RoleConfig[] = [
  {
    name: 'Manager',
    apply_when: { email: '%%user.custom_data.manages' },
    insert: true,
    delete: true,
    read: true,
    write: true,
    search: true,
    additional_fields: { read: true, write: true },
  },
  // filled: "..." after write:true in the vector; search and additional_fields as for Manager.
  { name: 'Employee', apply_when: { email: '%%user.data.email' }, insert: false, delete: false, read: true, write: true, search: true },
];
const phylisDoc = { _id: 'e1', employeeId: '0528', email: phylis, manages: [] };

const reminderRoles: RoleConfig[] = [
  // filled: the vector lists only what differs; "insert allowed" for task_editor means write:true, and
  // delete (evaluated only after the role has write, spec 2.7) means write:true for "API key user".
  { name: 'role is admin', apply_when: { '%%user.custom_data.roles': 'admin' }, read: true, write: true, insert: true, delete: true },
  { name: 'task_editor', apply_when: { '%%user.custom_data.roles': 'task_editor' }, read: true, write: true, insert: true, delete: false },
  { name: 'API key user', apply_when: { '%%user.type': 'server' }, read: true, write: true, insert: true, delete: true },
  { name: 'default', apply_when: {}, read: true, write: false, insert: false, delete: false },
];

const assignmentRoles: RoleConfig[] = [
  {
    name: 'Owner of the document',
    apply_when: { $or: [{ '%%root.memberId': '%%user.id' }, { '%%user.custom_data.roles': { $in: ['admin', 'task_editor'] } }] },
    read: true,
    write: true,
    insert: true,
    delete: true,
    search: true,
  },
  { name: 'default', apply_when: {}, read: true, write: true, insert: false, delete: false },
];

const taskDefaultRole: RoleConfig = {
  name: 'default',
  apply_when: {},
  read: true,
  insert: false,
  delete: false,
  fields: {
    estimate: { read: true, write: true },
    flag: { read: true, write: true }, // filled: "{…}" read as estimate's
    linked_tasks: { read: true, write: true },
    comments: { read: true, write: true }, // filled
    tags: { read: true, write: true }, // filled
  },
};

const commentRoles: RoleConfig[] = [
  {
    name: 'Draft',
    apply_when: { source: { $eq: '' }, title: { $eq: '' }, url: { $eq: '' } },
    read: true,
    write: true,
    insert: true,
    delete: true,
    search: true,
  },
  { name: 'default', apply_when: {}, read: true, insert: false, delete: false, fields: { flag: { read: true, write: true } } },
];

export const roleVectors: RoleVector[] = [
  {
    id: 'C1',
    source: 'DOCS rules/roles.txt',
    collection: { database: 'company', collection: 'employees', roles: employeeRoles },
    cases: [
      {
        title: 'an employee reads her own document as Employee',
        user: { id: 'phylis', data: { email: phylis }, custom_data: { manages: [] } },
        op: 'read',
        doc: phylisDoc,
        expect: { role: 'Employee', visible: true, document: phylisDoc },
      },
      {
        title: 'an employee updates her own document',
        user: { id: 'phylis', data: { email: phylis }, custom_data: { manages: [] } },
        op: 'update',
        pre: phylisDoc,
        post: { ...phylisDoc, employeeId: '0529' },
        expect: { role: 'Employee', allowed: true },
      },
      {
        title: 'an employee may not delete her own document',
        user: { id: 'phylis', data: { email: phylis }, custom_data: { manages: [] } },
        op: 'delete',
        doc: phylisDoc,
        expect: { role: 'Employee', allowed: false },
      },
      {
        title: 'an employee may not insert a new document',
        user: { id: 'phylis', data: { email: phylis }, custom_data: { manages: [] } },
        op: 'insert',
        doc: { _id: 'e9', employeeId: '0999', email: phylis, manages: [] },
        expect: { role: 'Employee', allowed: false },
      },
    ],
  },
  {
    id: 'C2',
    source: 'DOCS rules/roles.txt (array containment derived)',
    collection: { database: 'company', collection: 'employees', roles: employeeRoles },
    cases: [
      {
        title: 'a manager gets the Manager role for a managed employee and may delete',
        user: { id: 'andy', data: { email: andy }, custom_data: { manages: [phylis, stanley] } },
        op: 'delete',
        doc: phylisDoc,
        expect: { role: 'Manager', allowed: true },
      },
    ],
  },
  {
    id: 'C10',
    source: 'OBSERVED real-app rules (notes) + DOCS "Implicit Read Permission"',
    collection: {
      database: 'app',
      collection: 'notes',
      roles: [{ name: 'admin', apply_when: { '%%user.custom_data.roles': 'admin' }, write: true, insert: true, delete: true, search: true, additional_fields: {} }],
    },
    cases: [
      {
        title: 'an admin reads through the write permission',
        user: { id: 'a1', custom_data: { roles: ['admin'] } },
        op: 'read',
        doc: { _id: 'n1', text: 'hello' },
        expect: { role: 'admin', visible: true, document: { _id: 'n1', text: 'hello' } },
      },
      {
        title: 'an admin updates',
        user: { id: 'a1', custom_data: { roles: ['admin'] } },
        op: 'update',
        pre: { _id: 'n1', text: 'hello' },
        post: { _id: 'n1', text: 'bye' },
        expect: { role: 'admin', allowed: true },
      },
      {
        title: 'an admin inserts',
        user: { id: 'a1', custom_data: { roles: ['admin'] } },
        op: 'insert',
        doc: { _id: 'n2', text: 'new' },
        expect: { role: 'admin', allowed: true },
      },
      {
        title: 'an admin deletes',
        user: { id: 'a1', custom_data: { roles: ['admin'] } },
        op: 'delete',
        doc: { _id: 'n1', text: 'hello' },
        expect: { role: 'admin', allowed: true },
      },
    ],
  },
  {
    id: 'C9',
    source: 'DOCS rules/examples.txt',
    collection: {
      database: 'app',
      collection: 'embedded',
      roles: [
        {
          name: 'embedded',
          apply_when: {},
          delete: true,
          insert: true,
          fields: { someEmbeddedDocument: { fields: { someEmbeddedField: { read: true, write: true } } } },
          additional_fields: {},
        },
      ],
    },
    cases: [
      {
        title: 'only the embedded field with read permission is returned (and _id, decision 0010)',
        user: { id: 'u1' },
        op: 'read',
        doc: { _id: 1, top: 3, someEmbeddedDocument: { someEmbeddedField: 1, other: 2 } },
        expect: { role: 'embedded', visible: true, document: { _id: 1, someEmbeddedDocument: { someEmbeddedField: 1 } } },
      },
    ],
  },
  {
    id: 'C11',
    source: 'OBSERVED real-app rules (reminders)',
    collection: { database: 'app', collection: 'reminders', roles: reminderRoles },
    cases: [
      {
        title: 'an API key user gets "API key user" and may delete',
        user: { id: 'key1', type: 'server', custom_data: {} },
        op: 'delete',
        doc: { _id: 'r1', title: 'call' },
        expect: { role: 'API key user', allowed: true },
      },
      {
        title: 'a task editor may insert',
        user: { id: 'u1', type: 'normal', custom_data: { roles: ['task_editor'] } },
        op: 'insert',
        doc: { _id: 'r2', title: 'write' },
        expect: { role: 'task_editor', allowed: true },
      },
      {
        title: 'a task editor may not delete',
        user: { id: 'u1', type: 'normal', custom_data: { roles: ['task_editor'] } },
        op: 'delete',
        doc: { _id: 'r1', title: 'call' },
        expect: { role: 'task_editor', allowed: false },
      },
      {
        title: 'a plain user gets default and may not insert',
        user: { id: 'u2' },
        op: 'insert',
        doc: { _id: 'r3', title: 'x' },
        expect: { role: 'default', allowed: false },
      },
    ],
  },
  {
    id: 'C12',
    source: 'OBSERVED real-app rules (assignments)',
    collection: { database: 'app', collection: 'assignments', roles: assignmentRoles },
    cases: [
      {
        title: 'the member of the document is owner and may delete',
        user: { id: 'u1' },
        op: 'delete',
        doc: { _id: 'a1', memberId: 'u1' },
        expect: { role: 'Owner of the document', allowed: true },
      },
      {
        title: 'a task editor is owner through the second branch and may delete',
        user: { id: 'u2', custom_data: { roles: ['task_editor'] } },
        op: 'delete',
        doc: { _id: 'a1', memberId: 'u1' },
        expect: { role: 'Owner of the document', allowed: true },
      },
      {
        title: 'another user gets default: delete refused',
        user: { id: 'u3' },
        op: 'delete',
        doc: { _id: 'a1', memberId: 'u1' },
        expect: { role: 'default', allowed: false },
      },
      {
        title: 'another user gets default: update allowed',
        user: { id: 'u3' },
        op: 'update',
        pre: { _id: 'a1', memberId: 'u1', status: 'open' },
        post: { _id: 'a1', memberId: 'u1', status: 'done' },
        expect: { role: 'default', allowed: true },
      },
    ],
  },
  {
    id: 'C13',
    source: 'OBSERVED real-app rules (tasks), derived',
    collection: { database: 'app', collection: 'tasks', roles: [taskDefaultRole] },
    cases: [
      {
        title: 'setting a field with a field-level write grant is allowed',
        user: { id: 'anon' },
        op: 'update',
        pre: { _id: 't1', title: 'a', linked_tasks: [] },
        post: { _id: 't1', title: 'a', linked_tasks: [5] },
        expect: { role: 'default', allowed: true },
      },
      {
        title: 'setting a field outside fields (no additional_fields) is refused',
        user: { id: 'anon' },
        op: 'update',
        pre: { _id: 't1', title: 'a', linked_tasks: [] },
        post: { _id: 't1', title: 'x', linked_tasks: [] },
        expect: { role: 'default', allowed: false },
      },
      {
        title: 'the whole document stays readable',
        user: { id: 'anon' },
        op: 'read',
        doc: { _id: 't1', title: 'a', linked_tasks: [], secret: 's' },
        expect: { role: 'default', visible: true, document: { _id: 't1', title: 'a', linked_tasks: [], secret: 's' } },
      },
    ],
  },
  {
    id: 'C14',
    source: 'OBSERVED real-app rules (comments)',
    collection: { database: 'app', collection: 'comments', roles: commentRoles },
    cases: [
      {
        title: 'an empty draft matches Draft and may be deleted',
        user: { id: 'u1' },
        op: 'delete',
        doc: { _id: 'c1', source: '', title: '', url: '', text: 'hi' },
        expect: { role: 'Draft', allowed: true },
      },
      {
        title: 'a published comment gets default: delete refused',
        user: { id: 'u1' },
        op: 'delete',
        doc: { _id: 'c2', source: 'example.com', title: 't', url: 'u', text: 'hi' },
        expect: { role: 'default', allowed: false },
      },
      {
        title: 'a published comment gets default: setting flag allowed',
        user: { id: 'u1' },
        op: 'update',
        pre: { _id: 'c2', source: 'example.com', title: 't', url: 'u', text: 'hi' },
        post: { _id: 'c2', source: 'example.com', title: 't', url: 'u', text: 'hi', flag: true },
        expect: { role: 'default', allowed: true },
      },
    ],
  },
  {
    id: 'C15',
    source: 'DOCS rules/roles.txt',
    collection: { database: 'db', collection: 'c', roles: [{ name: 'owner', apply_when: { owner_id: '%%user.id' }, read: true, write: true }] },
    defaults: { roles: [{ name: 'all', apply_when: {}, read: true, write: true }] },
    cases: [
      {
        title: 'no collection role applies and default roles are not a fallback: hidden',
        user: { id: 'u2' },
        op: 'read',
        doc: { _id: 'd1', owner_id: 'u1' },
        expect: { role: null, visible: false },
      },
    ],
  },
  {
    id: 'C15',
    source: 'DOCS rules/roles.txt (same document in a collection without rules.json)',
    defaults: { roles: [{ name: 'all', apply_when: {}, read: true, write: true }] },
    cases: [
      {
        title: 'a collection without rules uses the default role',
        user: { id: 'u2' },
        op: 'read',
        doc: { _id: 'd1', owner_id: 'u1' },
        expect: { role: 'all', visible: true, document: { _id: 'd1', owner_id: 'u1' } },
      },
    ],
  },
];

// ---- apply_when and expression vectors: C3-C8, C23-C26 ---------------------------------------------------

const oidHex = '5f4863d1b2f3a1b2c3d4e623'; // the vector elides the middle ("5f48…e623")

export const expressionVectors: ExpressionVector[] = [
  {
    id: 'C3',
    source: 'DOCS rules/examples.txt (The User Is the Document Owner)',
    expression: { owner_id: '%%user.id' },
    cases: [
      { title: 'applies to the owner', user: { id: 'u1' }, root: { owner_id: 'u1' }, expect: true },
      { title: 'does not apply to another owner', user: { id: 'u1' }, root: { owner_id: 'u2' }, expect: false },
    ],
  },
  {
    id: 'C4',
    source: 'DOCS rules/examples.txt (An Array Field Contains the User ID)',
    expression: { collaborators: '%%user.id' },
    cases: [
      { title: 'an array containing the user id', user: { id: 'u2' }, root: { collaborators: ['u1', 'u2'] }, expect: true },
      { title: 'an empty array', user: { id: 'u2' }, root: { collaborators: [] }, expect: false },
    ],
  },
  {
    id: 'C5',
    source: 'DOCS rules/examples.txt',
    expression: { '%%root.email': '%%user.data.email' },
    cases: [{ title: "the document's email equals the user's", user: { id: 'u1', data: { email: 'a@x' } }, root: { email: 'a@x' }, expect: true }],
  },
  {
    id: 'C6',
    source: 'DOCS rules/examples.txt (function rule)',
    expression: { '%%true': { '%function': { name: 'isAuthorizedUser', arguments: ['%%user.id'] } } },
    cases: [
      { title: 'the function returns true', user: { id: 'u1' }, functions: { isAuthorizedUser: () => true }, expect: true, expectCalls: { isAuthorizedUser: ['u1'] } },
      { title: 'the function returns false', user: { id: 'u1' }, functions: { isAuthorizedUser: () => false }, expect: false, expectCalls: { isAuthorizedUser: ['u1'] } },
    ],
  },
  {
    id: 'C7',
    source: 'DOCS rules/expressions.txt',
    expression: { '%%environment.tag': 'production', '%%environment.values.baseUrl': { '%exists': true } },
    cases: [
      { title: 'development: the AND of keys fails', environment: { tag: 'development', values: { baseUrl: 'x' } }, expect: false },
      { title: 'production with baseUrl', environment: { tag: 'production', values: { baseUrl: 'x' } }, expect: true },
    ],
  },
  {
    id: 'C8',
    source: 'DOCS rules/expressions.txt',
    expression: { owner: '%%user.id', '%%request.remoteIPAddress': { $in: '%%values.allowedClientIPAddresses' } },
    cases: [
      {
        title: 'owner from an allowed address',
        user: { id: 'u1' },
        root: { owner: 'u1' },
        request: { remoteIPAddress: '10.0.0.5' },
        values: { allowedClientIPAddresses: ['10.0.0.5'] },
        expect: true,
      },
      {
        title: 'owner from another address',
        user: { id: 'u1' },
        root: { owner: 'u1' },
        request: { remoteIPAddress: '1.2.3.4' },
        values: { allowedClientIPAddresses: ['10.0.0.5'] },
        expect: false,
      },
    ],
  },
  {
    id: 'C23',
    source: 'DOCS rules/expressions.txt',
    expression: { '%%args.someNumber': { '%and': [{ $gt: 0 }, { $lte: 42 }] } },
    cases: [
      { title: '42 is in range', args: { someNumber: 42 }, expect: true },
      { title: '43 is not', args: { someNumber: 43 }, expect: false },
      { title: '0 is not', args: { someNumber: 0 }, expect: false },
    ],
  },
  {
    id: 'C24',
    source: 'DOCS rules/expressions.txt',
    expression: { '%%args.url': { $exists: true }, '%%args.body.userId': '%%user.id' },
    cases: [
      { title: 'the caller is the body user', user: { id: 'u1' }, args: { url: 'x', body: { userId: 'u1' } }, expect: true },
      { title: 'another caller', user: { id: 'u2' }, args: { url: 'x', body: { userId: 'u1' } }, expect: false },
    ],
  },
  {
    id: 'C25',
    source: 'DOCS rules/expressions.txt',
    expression: { string_id: { '%oidToString': '%%root._id' } },
    cases: [{ title: 'string_id is the hex of _id', root: { _id: ObjectId.createFromHexString(oidHex), string_id: oidHex }, expect: true }],
  },
  {
    id: 'C26',
    source: 'DOCS schemas/enforce-a-schema.txt (validate with %%prev/%%this)',
    expression: { '%or': [{ '%%prev': { '%exists': false } }, { '%%prev': '%%this' }] },
    cases: [
      { title: 'insert with owner_id "a"', this: 'a', expect: true },
      { title: 'update "a" to "a"', prev: 'a', this: 'a', expect: true },
      { title: 'update "a" to "b"', prev: 'a', this: 'b', expect: false },
      { title: 'update from missing to "b"', this: 'b', expect: true },
    ],
  },
];

// ---- Flexible Sync roles: C16-C19 ---------------------------------------------------------------------

export const syncVectors: SyncVector[] = [
  {
    id: 'C16',
    source: 'DOCS sync/app-builder/device-sync-permissions-guide.txt',
    rules: {
      roles: [
        {
          name: 'owner-read-write',
          apply_when: {},
          document_filters: { read: { owner_id: '%%user.id' }, write: { owner_id: '%%user.id' } },
          read: true,
          write: true,
        },
      ],
    },
    cases: [
      {
        title: 'own documents sync and accept writes; others neither',
        user: { id: 'u1' },
        role: 'owner-read-write',
        denied: false,
        docs: [
          { doc: { _id: 1, owner_id: 'u1' }, read: true, write: true },
          { doc: { _id: 2, owner_id: 'u2' }, read: false, write: false },
        ],
      },
    ],
  },
  {
    id: 'C17',
    source: 'DOCS sync/app-builder/device-sync-permissions-guide.txt',
    rules: {
      roles: [
        { name: 'admin', apply_when: { '%%user.custom_data.isGlobalAdmin': true }, document_filters: { read: true, write: true }, read: true, write: true },
        { name: 'user', apply_when: {}, document_filters: { read: { owner_id: '%%user.id' }, write: { owner_id: '%%user.id' } }, read: true, write: true },
      ],
    },
    cases: [
      {
        title: 'a global admin reads and writes every document',
        user: { id: 'boss', custom_data: { isGlobalAdmin: true } },
        role: 'admin',
        denied: false,
        docs: [
          { doc: { _id: 1, owner_id: 'u1' }, read: true, write: true },
          { doc: { _id: 2, owner_id: 'u2' }, read: true, write: true },
        ],
      },
      {
        title: 'a user without custom data gets own documents only',
        user: { id: 'u1' },
        role: 'user',
        denied: false,
        docs: [
          { doc: { _id: 1, owner_id: 'u1' }, read: true, write: true },
          { doc: { _id: 2, owner_id: 'u2' }, read: false, write: false },
        ],
      },
    ],
  },
  {
    id: 'C18',
    source: 'DOCS sync/app-builder/device-sync-permissions-guide.txt (Restricted News Feed)',
    rules: {
      roles: [
        {
          name: 'subscriber',
          apply_when: {},
          document_filters: { read: { owner_id: { $in: '%%user.custom_data.subscribedTo' } }, write: { owner_id: '%%user.id' } },
          read: true,
          write: true,
        },
      ],
    },
    cases: [
      {
        title: 'subscribed feeds are readable, own feed readable and writable, others neither',
        user: { id: '1234', custom_data: { subscribedTo: ['456', '789'] } },
        role: 'subscriber',
        denied: false,
        docs: [
          { doc: { _id: 1, owner_id: '456' }, read: true, write: false },
          { doc: { _id: 2, owner_id: '1234' }, read: true, write: true },
          { doc: { _id: 3, owner_id: '999' }, read: false, write: false },
        ],
      },
    ],
  },
  {
    id: 'C19',
    source: 'DOCS rules/sync-compatibility.txt',
    rules: {
      roles: [
        { name: 'r1', apply_when: {}, document_filters: { read: { '%%root.x': 1 }, write: true }, read: true, write: true },
        { name: 'r2', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true },
      ],
    },
    cases: [{ title: 'the first matching role is incompatible: denied, r2 never tried', user: { id: 'u1' }, role: 'r1', denied: true }],
  },
];

// ---- Filters: C20-C22 -----------------------------------------------------------------------------------

export const filterVectors: FilterVector[] = [
  {
    id: 'C20',
    source: 'DOCS rules/filters.txt',
    filters: [{ name: 'owner', apply_when: { '%%true': true }, query: { owner_id: '%%user.id' }, projection: {} }],
    user: { id: 'u1' },
    query: { year: 2000 },
    expect: { query: { $and: [{ year: 2000 }, { owner_id: 'u1' }] } },
  },
  {
    id: 'C21',
    source: 'DOCS mongodb/tables/query-filter-params.rst',
    filters: [
      { name: 'hide-a', apply_when: {}, query: {}, projection: { a: 0 } },
      { name: 'only-b', apply_when: {}, query: {}, projection: { b: 1 } },
    ],
    user: { id: 'u1' },
    expect: { error: 'FilterProjectionConflict' },
  },
  {
    id: 'C22',
    source: 'DOCS includes/note-filters-no-mongodb-expansions.rst',
    filters: [{ name: 'mine', apply_when: { '%%root.owner': '%%user.id' }, query: {}, projection: {} }],
    user: { id: 'u1' },
    expect: { error: 'InvalidRule' },
  },
];

// ---- Partition-Based Sync: C27-C30 ----------------------------------------------------------------------

/** C30's permissions collection, read by the rule function. */
const partitionAcl: Record<string, { partition: string; canRead: string[] }> = { p1: { partition: 'p1', canRead: ['u1'] } };

export const partitionVectors: PartitionVector[] = [
  {
    id: 'C27',
    source: 'DOCS reference/partition-based-sync.txt',
    permissions: {
      read: { $or: [{ '%%user.id': '%%partition' }, { '%%user.custom_data.shared': '%%partition' }] },
      write: { '%%user.id': '%%partition' },
    },
    cases: [
      { title: 'own partition: read and write', user: { id: 'u1', custom_data: { shared: ['team-7'] } }, partition: 'u1', read: true, write: true },
      { title: 'shared partition: read only', user: { id: 'u1', custom_data: { shared: ['team-7'] } }, partition: 'team-7', read: true, write: false },
      { title: "someone else's partition: none", user: { id: 'u1', custom_data: { shared: ['team-7'] } }, partition: 'u2', read: false, write: false },
    ],
  },
  {
    id: 'C28',
    source: 'DOCS reference/partition-based-sync.txt (one value)',
    permissions: { read: { '%%partition': 'PUBLIC' } },
    cases: [
      { title: 'PUBLIC is open', user: { id: 'anyone' }, partition: 'PUBLIC', read: true, write: false },
      { title: 'another partition is not', user: { id: 'anyone' }, partition: 'PRIVATE', read: false, write: false },
    ],
  },
  {
    id: 'C28',
    source: 'DOCS reference/partition-based-sync.txt (list of values)',
    permissions: { read: { '%%partition': { $in: ['PUBLIC (NA)', 'PUBLIC (EMEA)', 'PUBLIC (APAC)'] } } },
    cases: [
      { title: 'a listed partition is open', user: { id: 'anyone' }, partition: 'PUBLIC (EMEA)', read: true, write: false },
      { title: 'PUBLIC is not listed', user: { id: 'anyone' }, partition: 'PUBLIC', read: false, write: false },
    ],
  },
  {
    id: 'C29',
    source: 'DOCS reference/partition-based-sync.txt (custom user data)',
    permissions: { read: { '%%user.custom_data.readPartitions': '%%partition' }, write: { '%%user.data.writePartitions': '%%partition' } },
    cases: [
      { title: 'a partition in readPartitions', user: { id: 'u1', custom_data: { readPartitions: ['p1', 'p2'] } }, partition: 'p2', read: true, write: false },
      { title: 'a partition not in readPartitions', user: { id: 'u1', custom_data: { readPartitions: ['p1', 'p2'] } }, partition: 'p3', read: false, write: false },
      {
        title: 'provider metadata grants write (and so read)',
        user: { id: 'u1', data: { writePartitions: ['p3'] }, custom_data: { readPartitions: ['p1'] } },
        partition: 'p3',
        read: true,
        write: true,
      },
    ],
  },
  {
    id: 'C30',
    source: 'DOCS reference/partition-based-sync.txt (function rule)',
    permissions: { read: { '%%true': { '%function': { name: 'canReadPartition', arguments: ['%%partition'] } } } },
    cases: [
      {
        title: 'a user listed in canRead reads',
        user: { id: 'u1' },
        partition: 'p1',
        functions: { canReadPartition: ([partition], user) => partitionAcl[String(partition)]?.canRead.includes(user?.id ?? '') ?? false },
        read: true,
        write: false,
      },
      {
        title: 'an unlisted user is denied',
        user: { id: 'u2' },
        partition: 'p1',
        functions: { canReadPartition: ([partition], user) => partitionAcl[String(partition)]?.canRead.includes(user?.id ?? '') ?? false },
        read: false,
        write: false,
      },
    ],
  },
];
