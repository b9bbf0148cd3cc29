/**
 * App Services' per-operation limits as validation rules, so an operation over a limit fails whole
 * before any resolver runs: at most 10 root resolvers, relationships at most 5 levels deep.
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

export const appServicesLimits: ValidationRule = (context: ValidationContext): ASTVisitor => ({
  OperationDefinition(node: OperationDefinitionNode) {
    const schema = context.getSchema();
    const root = node.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : node.operation === OperationTypeNode.SUBSCRIPTION ? schema.getSubscriptionType() : schema.getQueryType();
    if (!root) return;
    if (countRootFields(context, node.selectionSet, new Set()) > MAX_ROOT_RESOLVERS) {
      context.reportError(new GraphQLError(MAX_QUERIES_MESSAGE, { nodes: node }));
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
      if (!selection.name.value.startsWith('__')) count += 1;
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
