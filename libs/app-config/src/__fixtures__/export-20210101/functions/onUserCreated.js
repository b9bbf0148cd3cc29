exports = async function(user) {
  const customers = context.services.get("mongodb-atlas").db("shop").collection("customers");
  await customers.insertOne({ _id: user.id, user_id: user.id, store_id: "main" });
};
