// Greets the caller with the app's "greeting" value.
exports = function (name) {
  return `${context.values.get('greeting')}, ${name ?? 'stranger'}!`;
};
