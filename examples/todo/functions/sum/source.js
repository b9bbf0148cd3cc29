// Adds two numbers: a minimal callable function.
exports = function (a, b) {
  return a + b;
};
