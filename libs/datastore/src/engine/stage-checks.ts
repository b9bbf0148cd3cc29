/**
 * Shape checks for the stages that read other collections ($lookup, $graphLookup, $unionWith) and for
 * $facet, at any depth, with MongoDB's codes. mingo, which runs them, fails on malformed ones with its own
 * JavaScript errors ("Cannot read properties of undefined"); those must never reach a caller.
 */
import { DatastoreError } from '../api/datastore.error';
import { isPlainObject, typeName } from '../bson/values';

function parseError(message: string, code = 9): never {
  throw new DatastoreError('FailedToParse', message, { code });
}

function checkLookup(spec: unknown): void {
  if (!isPlainObject(spec)) parseError(`the $lookup specification must be an Object, but found ${typeName(spec)}`);
  if (spec.from !== undefined && typeof spec.from !== 'string' && !isPlainObject(spec.from)) {
    parseError(`$lookup 'from' field must be either a string or an object, but found ${typeName(spec.from)}`);
  }
  if (typeof spec.as !== 'string' || spec.as.length === 0) parseError("must specify 'as' field for a $lookup");
  const hasFields = spec.localField !== undefined || spec.foreignField !== undefined;
  if (hasFields && (typeof spec.localField !== 'string' || typeof spec.foreignField !== 'string')) {
    parseError("$lookup requires both or neither of 'localField' and 'foreignField' to be specified, as strings");
  }
  if (spec.pipeline !== undefined) checkStages(spec.pipeline);
  if (!hasFields && spec.pipeline === undefined) parseError("$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified");
  if (spec.from === undefined && spec.pipeline === undefined) parseError("must specify 'from' field for a $lookup");
}

function checkGraphLookup(spec: unknown): void {
  if (!isPlainObject(spec)) parseError(`the $graphLookup stage specification must be an object, but found ${typeName(spec)}`);
  for (const field of ['from', 'as', 'connectFromField', 'connectToField']) {
    if (typeof spec[field] !== 'string') parseError(`$graphLookup requires '${field}' to be a string, but found ${typeName(spec[field])}`, 40103);
  }
  if (spec.startWith === undefined) parseError("must specify 'startWith', 'connectFromField', 'connectToField', 'from', and 'as'", 40105);
  if (spec.maxDepth !== undefined && (typeof spec.maxDepth !== 'number' || spec.maxDepth < 0)) parseError('maxDepth must be a nonnegative number', 40101);
  if (spec.restrictSearchWithMatch !== undefined && !isPlainObject(spec.restrictSearchWithMatch)) {
    parseError(`restrictSearchWithMatch must be an object, found ${typeName(spec.restrictSearchWithMatch)}`, 40185);
  }
}

function checkUnionWith(spec: unknown): void {
  if (typeof spec === 'string') return;
  if (!isPlainObject(spec)) parseError(`the $unionWith stage specification must be an object or string, but found ${typeName(spec)}`);
  if (spec.coll !== undefined && typeof spec.coll !== 'string') parseError(`BSON field '$unionWith.coll' is the wrong type '${typeName(spec.coll)}', expected type 'string'`, 14);
  if (spec.pipeline !== undefined) checkStages(spec.pipeline);
  if (spec.coll === undefined && spec.pipeline === undefined) parseError("$unionWith requires 'coll' or a 'pipeline' starting with $documents");
}

function checkFacet(spec: unknown): void {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) parseError(`the $facet specification must be a non-empty object, but found: ${typeName(spec)}`, 40169);
  for (const [name, pipeline] of Object.entries(spec)) {
    if (!Array.isArray(pipeline)) parseError(`arguments to $facet must be arrays, ${name} is type ${typeName(pipeline)}`, 40170);
    checkStages(pipeline);
  }
}

/** Checks a pipeline's cross-collection and $facet stages, at any depth. */
export function checkStages(pipeline: unknown): void {
  if (!Array.isArray(pipeline)) parseError(`a pipeline must be an array, but found ${typeName(pipeline)}`, 14);
  for (const stage of pipeline as unknown[]) {
    if (!isPlainObject(stage)) continue;
    const spec = stage[Object.keys(stage)[0]];
    switch (Object.keys(stage)[0]) {
      case '$lookup':
        checkLookup(spec);
        break;
      case '$graphLookup':
        checkGraphLookup(spec);
        break;
      case '$unionWith':
        checkUnionWith(spec);
        break;
      case '$facet':
        checkFacet(spec);
        break;
      default:
        break;
    }
  }
}
