// Translation between changesets and the documents of the synced collections, both directions (pure).
export * from './values';
export * from './schema';
export * from './documents';
export * from './changes';
