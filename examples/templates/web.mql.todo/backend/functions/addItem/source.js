// Adds an item owned by the calling user.
exports = async function (summary) {
  const items = context.services.get('mongodb-atlas').db('todo').collection('items');
  const { insertedId } = await items.insertOne({ owner_id: context.user.id, summary, isComplete: false });
  return insertedId;
};
