exports = async function countNotes(changeEvent) {
  const ownerId = changeEvent.fullDocument.owner_id;
  const profiles = context.services.get("mongodb-atlas").db("fieldnotes").collection("profiles");
  await profiles.updateOne({ owner_id: ownerId }, { $inc: { noteCount: 1 } }, { upsert: true });
};
