exports = async function(bookId) {
  const books = context.services.get("mongodb-atlas").db("lending").collection("books");
  return books.updateOne({ _id: bookId, lentTo: null }, { $set: { lentTo: context.user.id } });
};
