// Runs on every new order: writes an audit entry next to it.
exports = async function (changeEvent) {
  const audit = context.services.get('mongodb-atlas').db('shop').collection('audit');
  await audit.insertOne({ order_id: changeEvent.documentKey._id, operation: changeEvent.operationType, at: new Date() });
};
