exports = async function onUserCreated(user) {
  const profiles = context.services.get("mongodb-atlas").db("fieldnotes").collection("profiles");
  await profiles.insertOne({ owner_id: user.id, displayName: "", noteCount: 0 });
};
