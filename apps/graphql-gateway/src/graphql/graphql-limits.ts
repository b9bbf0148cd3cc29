/**
 * App Services' per-operation limits as validation rules, so an operation over a limit fails whole
 * before any resolver runs: at most 10 root resolvers, relationships at most 5 levels deep. Beside them, the
 * bounds that keep one request from holding the server: a document of at most MAX_TOKENS tokens (parsing
 * stops there), introspection fields (`__schema`, `__type`) counted as root resolvers, and at most
 * MAX_SELECTIONS fields in the response it asks for (aliases multiply the work and the response: a 128 KB
 * query of aliased `__schema` answered 9 MB after 0.9 s of the event loop).
 */
import { fieldExtension } from '@tessera/graphql-schema';
import {
  GraphQLError,
  type GraphQLCompositeType,
  getNamedType,
  isCompositeType,
  isObjectType,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
  type ASTVisitor,
  type OperationDefinitionNode,
  type GraphQLObjectType,
  OperationTypeNode,
} from 'graphql/index.js';
import { MAX_DEPTH_MESSAGE, MAX_QUERIES_MESSAGE } from './graphql.error';

export const MAX_ROOT_RESOLVERS = 10;
export const MAX_RELATIONSHIP_DEPTH = 5;
/** Tokens of a GraphQL document: an introspection query has about 1,000. */
export const MAX_TOKENS = 20_000;
/** Fields of the response an operation asks for: generous for any query a client writes by hand or generates. */
export const MAX_SELECTIONS = 2_000;
export const MAX_SELECTIONS_MESSAGE = `the operation asks for more than ${MAX_SELECTIONS} fields in its response`;

export const appServicesLimits: ValidationRule = (context: ValidationContext): ASTVisitor => ({
  OperationDefinition(node: OperationDefinitionNode) {
    const schema = context.getSchema();
    const root = node.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : node.operation === OperationTypeNode.SUBSCRIPTION ? schema.getSubscriptionType() : schema.getQueryType();
    if (!root) return;
    if (countRootFields(context, node.selectionSet, new Set()) > MAX_ROOT_RESOLVERS) {
      context.reportError(new GraphQLError(MAX_QUERIES_MESSAGE, { nodes: node }));
      return;
    }
    if (countSelections(context, [node.selectionSet], { sets: new WeakMap(), fragments: new Map() }) > MAX_SELECTIONS) {
      context.reportError(new GraphQLError(MAX_SELECTIONS_MESSAGE, { nodes: node }));
      return;
    }
    if (relationshipDepth(context, root, node.selectionSet, new Set(), new Map()) > MAX_RELATIONSHIP_DEPTH) {
      context.reportError(new GraphQLError(MAX_DEPTH_MESSAGE, { nodes: node }));
    }
  },
});

function countRootFields(context: ValidationContext, selectionSet: SelectionSetNode, visited: Set<string>): number {
  let count = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      // `__typename` costs nothing; `__schema` and `__type` walk the schema like a resolver.
      if (selection.name.value !== '__typename') count += 1;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      count += countRootFields(context, selection.selectionSet, visited);
    } else if (!visited.has(selection.name.value)) {
      visited.add(selection.name.value);
      const fragment = context.getFragment(selection.name.value);
      if (fragment) count += countRootFields(context, fragment.selectionSet, visited);
    }
  }
  return count;
}

/** A selection set's fields by response key (alias or name), fragments merged in, each with the selection sets below it. */
type ResponseFields = Map<string, SelectionSetNode[]>;
/** What one operation's count made already: the fields of each selection set and of each fragment. */
interface ResponseFieldsMade {
  sets: WeakMap<SelectionSetNode, ResponseFields>;
  fragments: Map<string, ResponseFields>;
}

function addField(fields: ResponseFields, key: string, below: SelectionSetNode | undefined): void {
  let list = fields.get(key);
  if (!list) fields.set(key, (list = []));
  if (below && !list.includes(below)) list.push(below);
}

/**
 * The fields of a selection set by response key, as execution merges them (fields of one key from several
 * places, fragments included, become one field of the response); made once per selection set, so a fragment
 * spread any number of times is read once. A fragment spreading itself is left to the NoFragmentCycles rule.
 */
function responseFields(context: ValidationContext, selectionSet: SelectionSetNode, made: ResponseFieldsMade, visiting: Set<string>): ResponseFields {
  const known = made.sets.get(selectionSet);
  if (known) return known;
  const fields: ResponseFields = new Map();
  const mergeIn = (from: ResponseFields): void => {
    for (const [key, below] of from) {
      addField(fields, key, undefined);
      for (const set of below) addField(fields, key, set);
    }
  };
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) addField(fields, selection.alias?.value ?? selection.name.value, selection.selectionSet);
    else if (selection.kind === Kind.INLINE_FRAGMENT) mergeIn(responseFields(context, selection.selectionSet, made, visiting));
    else {
      const name = selection.name.value;
      let spread = made.fragments.get(name);
      if (!spread) {
        const fragment = context.getFragment(name);
        if (!fragment || visiting.has(name)) continue;
        visiting.add(name);
        spread = responseFields(context, fragment.selectionSet, made, visiting);
        visiting.delete(name);
        made.fragments.set(name, spread);
      }
      mergeIn(spread);
    }
  }
  made.sets.set(selectionSet, fields);
  return fields;
}

/**
 * The fields of the response an operation asks for (each field once per place in the response, aliases
 * counted apart, repeated fragments merged as execution merges them); stops counting past MAX_SELECTIONS.
 */
function countSelections(context: ValidationContext, sets: readonly SelectionSetNode[], made: ResponseFieldsMade): number {
  const merged: ResponseFields = new Map();
  for (const set of sets) {
    for (const [key, below] of responseFields(context, set, made, new Set())) {
      addField(merged, key, undefined);
      for (const node of below) addField(merged, key, node);
    }
  }
  let count = 0;
  for (const below of merged.values()) {
    count += 1 + (below.length > 0 ? countSelections(context, below, made) : 0);
    if (count > MAX_SELECTIONS) break;
  }
  return count;
}

/**
 * The deepest chain of relationship fields below `selectionSet`. A fragment's depth on a type is computed
 * once (`known`): a fragment spreading the next one twice, thirty levels down, was walked 2^30 times and
 * held the event loop for minutes.
 */
function relationshipDepth(context: ValidationContext, type: GraphQLCompositeType, selectionSet: SelectionSetNode, visiting: Set<string>, known: Map<string, number>): number {
  let deepest = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (!selection.selectionSet || !isObjectType(type)) continue;
      const field = (type as GraphQLObjectType).getFields()[selection.name.value];
      if (!field) continue;
      const named = getNamedType(field.type);
      if (!isCompositeType(named)) continue;
      const own = fieldExtension(field.extensions)?.kind === 'relationship' ? 1 : 0;
      deepest = Math.max(deepest, own + relationshipDepth(context, named, selection.selectionSet, visiting, known));
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      deepest = Math.max(deepest, relationshipDepth(context, type, selection.selectionSet, visiting, known));
    } else {
      const name = selection.name.value;
      const fragment = context.getFragment(name);
      if (!fragment || visiting.has(name)) continue;
      const key = `${name} on ${type.name}`;
      let depth = known.get(key);
      if (depth === undefined) {
        visiting.add(name);
        depth = relationshipDepth(context, type, fragment.selectionSet, visiting, known);
        visiting.delete(name);
        known.set(key, depth);
      }
      deepest = Math.max(deepest, depth);
    }
  }
  return deepest;
}
