exports = async function summarize(text, words) {
  const limit = typeof words === "number" ? words : 5;
  const parts = String(text).split(/\s+/).filter(Boolean);
  const title = await context.functions.execute("notes/format/title", parts.slice(0, limit).join(" "));
  return parts.length > limit ? `${title}...` : title;
};
