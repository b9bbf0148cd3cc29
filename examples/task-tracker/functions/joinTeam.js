// Adds a team to the calling user's custom data; the partition permissions read it at the next open.
exports = async function(team) {
  if (typeof team !== "string" || team.length === 0 || team.length > 64) throw new Error("a team is a name of 1 to 64 characters");
  const profiles = context.services.get("mongodb-atlas").db("tracker").collection("profiles");
  await profiles.updateOne({ userId: context.user.id }, { $addToSet: { teams: team } }, { upsert: true });
  return (await profiles.findOne({ userId: context.user.id })).teams;
};
