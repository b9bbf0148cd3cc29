// Test helpers of @tessera/rql (for specs, end-to-end tests and benches only).
export { itemTable, itemQueryable, itemDocument, itemQuery, indexableItemQuery, servedItemQuery } from './arbitraries';
