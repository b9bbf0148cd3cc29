// Adds an item owned by the calling user, in the user's own partition.
exports = async function (summary) {
  const items = context.services.get('mongodb-atlas').db('todo').collection('items');
  const doc = { _partition: context.user.id, owner_id: context.user.id, summary, isComplete: false };
  const { insertedId } = await items.insertOne(doc);
  return insertedId;
};
