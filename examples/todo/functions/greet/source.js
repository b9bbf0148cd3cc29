// Greets a name with the app's "greeting" value.
exports = function (name) {
  const greeting = context.values.get('greeting');
  return `${greeting}, ${name ?? 'stranger'}!`;
};
