exports = async function listNotes(request, response) {
  const notes = context.services.get("mongodb-atlas").db("fieldnotes").collection("notes");
  const shared = await notes.find({ shared: true }, { title: 1 }).toArray();
  response.setStatusCode(200);
  response.setBody(JSON.stringify(shared));
};
