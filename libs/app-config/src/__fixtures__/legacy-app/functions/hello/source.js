exports = function(name) {
  return "hello " + name;
};
