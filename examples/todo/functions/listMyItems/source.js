// Lists the calling user's items through the data-access API; rules of todo.items apply.
exports = async function () {
  const items = context.services.get('mongodb-atlas').db('todo').collection('items');
  return items.find({ owner_id: context.user.id }).toArray();
};
